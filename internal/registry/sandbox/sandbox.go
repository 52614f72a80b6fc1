// Package sandbox is the simulated registry of DOMAIND_REGISTRY=sandbox (the
// default): real TLDs with realistic prices and rules, a table of registered,
// reserved and premium names, all in the database. Every other name under a
// sandbox TLD is available. DOMAIND_SANDBOX_LATENCY delays every call, so the
// service's timing can be tried as if a real registry answered.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/models"
)

// Sandbox is a registry.Provider on the database.
type Sandbox struct {
	db      *gorm.DB
	latency time.Duration
}

// New returns the sandbox registry on db, delaying each call by latency.
func New(db *gorm.DB, latency time.Duration) *Sandbox {
	return &Sandbox{db: db, latency: latency}
}

// Name implements registry.Provider.
func (s *Sandbox) Name() string { return "sandbox" }

func (s *Sandbox) wait(ctx context.Context) error {
	if s.latency <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(s.latency)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// TLDs implements registry.Provider.
func (s *Sandbox) TLDs(ctx context.Context) ([]string, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	var names []string
	err := s.db.WithContext(ctx).Model(&models.SandboxTLD{}).Order("name").Pluck("name", &names).Error
	return names, err
}

func (s *Sandbox) tld(ctx context.Context, tld string) (models.SandboxTLD, error) {
	var t models.SandboxTLD
	err := s.db.WithContext(ctx).First(&t, "name = ?", tld).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return t, fmt.Errorf("%s: %w", tld, registry.ErrUnknownTLD)
	}
	return t, err
}

// TLDInfo implements registry.Provider.
func (s *Sandbox) TLDInfo(ctx context.Context, tld string) (registry.TLDInfo, error) {
	if err := s.wait(ctx); err != nil {
		return registry.TLDInfo{}, err
	}
	t, err := s.tld(ctx, tld)
	return t.Info, err
}

// Prices implements registry.Provider.
func (s *Sandbox) Prices(ctx context.Context) ([]registry.Price, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	var tlds []models.SandboxTLD
	if err := s.db.WithContext(ctx).Order("name").Find(&tlds).Error; err != nil {
		return nil, err
	}
	var out []registry.Price
	for _, t := range tlds {
		for op, cents := range map[string]*int64{
			registry.OpRegister: t.RegisterCents, registry.OpRenew: t.RenewCents,
			registry.OpTransfer: t.TransferCents, registry.OpRestore: t.RestoreCents,
		} {
			if cents != nil {
				out = append(out, registry.Price{TLD: t.Name, Op: op, Cents: *cents, Currency: "USD"})
			}
		}
	}
	return out, nil
}

// Check implements registry.Provider. name is an ASCII domain name directly
// under one of the sandbox's TLDs.
func (s *Sandbox) Check(ctx context.Context, name string) (registry.Availability, error) {
	if err := s.wait(ctx); err != nil {
		return registry.Availability{}, err
	}
	label, tldName, ok := strings.Cut(name, ".")
	if !ok || label == "" || tldName == "" {
		return registry.Availability{}, fmt.Errorf("check %q: want label.tld", name)
	}
	t, err := s.tld(ctx, tldName)
	if err != nil {
		return registry.Availability{}, err
	}
	var n models.SandboxName
	err = s.db.WithContext(ctx).First(&n, "name = ?", name).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		if t.RegisterCents == nil {
			return registry.Availability{Reason: registry.ReasonNotSold}, nil
		}
		return registry.Availability{Available: true, Cents: *t.RegisterCents, Currency: "USD"}, nil
	case err != nil:
		return registry.Availability{}, err
	case n.State == models.SandboxPremium && n.PremiumCents != nil:
		return registry.Availability{Available: true, Premium: true, Cents: *n.PremiumCents, Currency: "USD"}, nil
	default:
		return registry.Availability{Reason: n.State}, nil
	}
}

// RefusingRecipient is the recipient the sandbox refuses pushes to, so
// tests and newcomers can see a failed transfer.
const RefusingRecipient = "sandbox-refuse"

// LosingRecipient is the recipient whose pushes the sandbox makes but
// whose answers it loses, as a registry that times out after the work is
// done; it refuses the repeat of such a push, as Realtime Register
// refuses to push a name the account no longer holds. So tests and
// newcomers can see a push left unconfirmed for ops.
const LosingRecipient = "sandbox-lose"

// PushDomain implements registry.Provider: after the sandbox's latency, a
// push to any recipient but RefusingRecipient and LosingRecipient
// succeeds. The sandbox keeps no record of partner inventory at the
// registry, so nothing else changes; only pushes to LosingRecipient are
// logged by change, to tell their repeats.
func (s *Sandbox) PushDomain(ctx context.Context, name, recipient, change string) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	switch recipient {
	case RefusingRecipient:
		return fmt.Errorf("push %s to %s: %w: the recipient does not accept transfers", name, recipient, registry.ErrPushRefused)
	case LosingRecipient:
		logged := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
			Create(&models.SandboxChange{Change: change, Name: name, AppliedAt: time.Now().UTC()})
		switch {
		case logged.Error != nil:
			return fmt.Errorf("push %s to %s: %w", name, recipient, logged.Error)
		case logged.RowsAffected == 0:
			return fmt.Errorf("push %s to %s: %w: the domain is no longer in the account", name, recipient, registry.ErrPushRefused)
		}
		return fmt.Errorf("push %s to %s: %w: no answer in time (the sandbox made the push and lost its answer)", name, recipient, registry.ErrTransient)
	}
	return nil
}

// UpdateDomain implements registry.Provider on a registered sandbox name.
// The change and its log row are written in one transaction, so a change
// id seen before changes nothing.
func (s *Sandbox) UpdateDomain(ctx context.Context, name string, u registry.Update, change string) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n models.SandboxName
		err := tx.First(&n, "name = ? AND state = ?", name, models.SandboxRegistered).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return fmt.Errorf("%s: %w", name, registry.ErrDomainNotHeld)
		}
		if err != nil {
			return err
		}
		logged := tx.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&models.SandboxChange{Change: change, Name: name, Update: u, AppliedAt: time.Now().UTC()})
		if logged.Error != nil || logged.RowsAffected == 0 {
			return logged.Error // nil when the change was applied before
		}
		if u.Locked != nil {
			n.Locked = *u.Locked
		}
		if u.Nameservers != nil {
			n.Nameservers = u.Nameservers
		}
		for role, c := range u.Contacts {
			if n.Contacts == nil {
				n.Contacts = map[string]registry.Contact{}
			}
			n.Contacts[role] = c
		}
		return tx.Model(&n).Select("locked", "nameservers", "contacts").Updates(&n).Error
	})
}
