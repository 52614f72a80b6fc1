package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/account"
	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/demo"
	"github.com/domaind/domaind/internal/password"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/registry/rtr"
	"github.com/domaind/domaind/internal/registry/sandbox"
	"github.com/domaind/domaind/internal/tldsync"
	"github.com/domaind/domaind/models"
)

// newRegistry returns the registry provider DOMAIND_REGISTRY names.
func newRegistry(cfg *config.Config, db *gorm.DB) (registry.Provider, error) {
	if cfg.Registry == "rtr" {
		return rtr.New(cfg.RTRURL, cfg.RTRAPIKey, cfg.RTRCustomer)
	}
	return sandbox.New(db, cfg.SandboxLatency), nil
}

// Sizes of the demo marketplace and of the demo user's portfolio.
const (
	demoListings = 5000
	demoDomains  = 1500
)

// seed loads the data a fresh installation needs, in dependency order: the
// simulated registry (when it is the provider), the demo account and
// marketplace (when demo seeding is on), extra listings when asked (domaind
// seed --listings N), then a first TLD sync so the pricing and metadata
// endpoints answer at once. Every step skips what is already there. A
// failed sync is an error only when strict (`domaind seed`); `domaind all`
// goes on and leaves it to the scheduled sync.
func seed(ctx context.Context, cfg *config.Config, db *gorm.DB, reg registry.Provider, log *slog.Logger, strict bool, listings int) error {
	if cfg.Registry == "sandbox" {
		n, err := sandbox.Seed(ctx, db)
		if err != nil {
			return fmt.Errorf("seed sandbox registry: %w", err)
		}
		log.InfoContext(ctx, "seeded", "what", "sandbox registry", "rows", n)
	}
	if cfg.SeedDemo {
		user, err := seedDemoUser(ctx, db, log)
		if err != nil {
			return err
		}
		if cfg.Registry == "sandbox" { // the demo portfolio is registered in the sandbox
			added, err := demo.Domains(ctx, db, user.ID, demoDomains, uint64(time.Now().UnixNano()), time.Now())
			if err != nil {
				return fmt.Errorf("seed demo domains: %w", err)
			}
			if added > 0 {
				log.InfoContext(ctx, "seeded", "what", "demo domains", "rows", added, "owner", demoEmail)
			}
		}
		var n int64
		if err := db.WithContext(ctx).Model(&models.Listing{}).Count(&n).Error; err != nil {
			return fmt.Errorf("count listings: %w", err)
		}
		if n == 0 {
			listings += demoListings
		}
	}
	if listings > 0 {
		added, err := demo.Listings(ctx, db, listings, uint64(time.Now().UnixNano()), time.Now())
		if err != nil {
			return err
		}
		log.InfoContext(ctx, "seeded", "what", "marketplace listings", "rows", added)
	}
	res, err := tldsync.Run(ctx, db, reg, log)
	if err != nil && strict {
		return fmt.Errorf("first TLD sync: %w", err)
	}
	if err != nil {
		log.WarnContext(ctx, "first TLD sync failed; the scheduled sync will retry", "err", err)
		return nil
	}
	log.InfoContext(ctx, "TLDs synced", "synced", res.Synced, "failed", res.Failed)
	return nil
}

// The demo account of the embedded mode, shown in the README.
const (
	demoEmail    = "demo@domaind.test"
	demoPassword = "demo-password"
)

func seedDemoUser(ctx context.Context, db *gorm.DB, log *slog.Logger) (models.User, error) {
	u, err := account.New(db, password.Default, time.Now).SignUp(ctx, demoEmail, demoPassword)
	switch {
	case errors.Is(err, account.ErrEmailTaken):
		err = db.WithContext(ctx).First(&u, "email = ?", demoEmail).Error
		return u, err
	case err != nil:
		return u, fmt.Errorf("seed demo user: %w", err)
	}
	log.InfoContext(ctx, "seeded", "what", "demo user", "email", demoEmail)
	return u, nil
}
