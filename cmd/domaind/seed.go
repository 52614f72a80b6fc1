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
	"github.com/domaind/domaind/internal/partner"
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

// Sizes of the demo marketplace, of the demo user's portfolio and of the
// partners' sandbox inventory.
const (
	demoListings  = 5000
	demoDomains   = 1500
	demoSandboxes = 2000
)

// seed loads the data a fresh installation needs, in dependency order: the
// simulated registry (when it is the provider), the demo account and
// marketplace (when demo seeding is on), extra listings when asked (domaind
// seed --listings N), then a first TLD sync so the pricing and metadata
// endpoints answer at once. Every step skips what is already there. A
// failed sync is an error only when strict (`domaind seed`); `domaind all`
// goes on and leaves it to the scheduled sync. With demo seeding on, it
// returns the demo partner's sandbox credential.
func seed(ctx context.Context, cfg *config.Config, db *gorm.DB, reg registry.Provider, log *slog.Logger, strict bool, listings int) (*partner.Credential, error) {
	var demoKey *partner.Credential
	if cfg.Registry == "sandbox" {
		n, err := sandbox.Seed(ctx, db)
		if err != nil {
			return nil, fmt.Errorf("seed sandbox registry: %w", err)
		}
		log.InfoContext(ctx, "seeded", "what", "sandbox registry", "rows", n)
	}
	if cfg.SeedDemo {
		user, err := seedDemoUser(ctx, db, log)
		if err != nil {
			return nil, err
		}
		if cfg.Registry == "sandbox" { // the demo portfolio is registered in the sandbox
			added, err := demo.Domains(ctx, db, user.ID, demoDomains, uint64(time.Now().UnixNano()), time.Now())
			if err != nil {
				return nil, fmt.Errorf("seed demo domains: %w", err)
			}
			if added > 0 {
				log.InfoContext(ctx, "seeded", "what", "demo domains", "rows", added, "owner", demoEmail)
			}
		}
		var n int64
		if err := db.WithContext(ctx).Model(&models.Listing{}).Count(&n).Error; err != nil {
			return nil, fmt.Errorf("count listings: %w", err)
		}
		if n == 0 {
			listings += demoListings
		}
		added, err := demo.SandboxInventory(ctx, db, demoSandboxes, time.Now())
		if err != nil {
			return nil, err
		}
		if added > 0 {
			log.InfoContext(ctx, "seeded", "what", "partner sandbox inventory", "rows", added)
		}
		key, err := seedDemoPartner(ctx, cfg, db, log)
		if err != nil {
			return nil, err
		}
		demoKey = &key
	}
	if listings > 0 {
		added, err := demo.Listings(ctx, db, listings, uint64(time.Now().UnixNano()), time.Now())
		if err != nil {
			return nil, err
		}
		log.InfoContext(ctx, "seeded", "what", "marketplace listings", "rows", added)
	}
	res, err := tldsync.Run(ctx, db, reg, log)
	if err != nil && strict {
		return nil, fmt.Errorf("first TLD sync: %w", err)
	}
	if err != nil {
		log.WarnContext(ctx, "first TLD sync failed; the scheduled sync will retry", "err", err)
		return demoKey, nil
	}
	log.InfoContext(ctx, "TLDs synced", "synced", res.Synced, "failed", res.Failed)
	return demoKey, nil
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

// demoPartnerEmail names the demo partner of the embedded mode.
const demoPartnerEmail = "partner@domaind.test"

// seedDemoPartner returns the demo partner's sandbox credential with every
// scope, making the approved partner (an affiliate) and the credential on
// first use. On
// later starts it unseals the same credential, so the key in the start-up
// text stays the one a newcomer copied.
func seedDemoPartner(ctx context.Context, cfg *config.Config, db *gorm.DB, log *slog.Logger) (partner.Credential, error) {
	partners := partner.New(db, cfg.SecretKey, time.Now)
	var p models.Partner
	err := db.WithContext(ctx).Take(&p, "contact_email = ? AND owner_user_id IS NULL", demoPartnerEmail).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		if p, err = partners.Create(ctx, "Demo Partner", demoPartnerEmail); err == nil {
			_, err = partners.Approve(ctx, p.ID)
		}
		if err == nil { // an affiliate, so that referral links can be tried too
			yes := true
			_, err = partners.Update(ctx, p.ID, partner.Terms{Affiliate: &yes})
		}
	}
	if err != nil {
		return partner.Credential{}, fmt.Errorf("seed demo partner: %w", err)
	}
	var keyID string
	err = db.WithContext(ctx).Model(&models.PartnerCredential{}).
		Where("partner_id = ? AND environment = ? AND revoked_at IS NULL", p.ID, models.EnvSandbox).
		Order("created_at").Limit(1).Pluck("key_id", &keyID).Error
	if err != nil {
		return partner.Credential{}, fmt.Errorf("find the demo partner's credential: %w", err)
	}
	if keyID == "" {
		issued, err := partners.IssueCredential(ctx, p.ID, models.EnvSandbox, partner.AllScopes)
		if err != nil {
			return partner.Credential{}, fmt.Errorf("seed demo partner credential: %w", err)
		}
		log.InfoContext(ctx, "seeded", "what", "demo partner", "partner", p.ID, "key_id", issued.KeyID)
		keyID = issued.KeyID
	}
	return partners.Authenticate(ctx, keyID)
}
