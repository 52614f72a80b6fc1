package brokerage

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/availability"
	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/siteprobe"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// Reasons a domain is not eligible, or not yet known to be.
const (
	ReasonInOpenCase          = "in_open_case"
	ReasonListedForSale       = "listed_for_sale"
	ReasonNotRegistered       = "not_registered"
	ReasonRegistrationUnknown = "registration_unknown"
	ReasonActiveSite          = "active_site"
	ReasonSiteCheckPending    = "site_check_pending"
)

// Eligibility states.
const (
	Eligible   = "eligible"
	Ineligible = "ineligible"
	Pending    = "pending"
)

// SiteCheckTTL is how long a probe's verdict stands.
const SiteCheckTTL = 24 * time.Hour

// ProbeGrace is how long a probe may run before another ask starts one
// again (a probe whose task was lost): longer than the task's timeout
// times its attempts.
const ProbeGrace = 15 * time.Minute

// Eligibility is whether a domain can be brokered. Eligible is null while
// the site check is pending (Status pending, reason site_check_pending).
type Eligibility struct {
	Domain   string   `json:"domain"`
	Status   string   `json:"status"`
	Eligible *bool    `json:"eligible"`
	Reasons  []string `json:"reasons"`
}

// Eligibility says whether domain can be brokered in env (see the package
// documentation), starting the site's probe when it needs one.
func (s *Service) Eligibility(ctx context.Context, env, domain string) (Eligibility, error) {
	name, err := parseDomain(domain)
	if err != nil {
		return Eligibility{}, err
	}
	e := Eligibility{Domain: name.ASCII}
	if e.Reasons, err = s.ruledOut(ctx, env, name); err != nil {
		return Eligibility{}, err
	}
	if len(e.Reasons) == 0 {
		reason, err := s.siteCheck(ctx, name.ASCII)
		if err != nil {
			return Eligibility{}, err
		}
		if reason != "" {
			e.Reasons = append(e.Reasons, reason)
		}
	}
	yes, no := true, false
	switch {
	case len(e.Reasons) == 0:
		e.Status, e.Eligible = Eligible, &yes
	case len(e.Reasons) == 1 && e.Reasons[0] == ReasonSiteCheckPending:
		e.Status = Pending
	default:
		e.Status, e.Eligible = Ineligible, &no
	}
	return e, nil
}

// parseDomain reads a domain input: a registrable name, as a validation
// error naming domain otherwise.
func parseDomain(domain string) (domainname.Name, error) {
	if domain == "" {
		return domainname.Name{}, fault.Invalid("domain", "is required")
	}
	name, err := domainname.Parse(domain)
	if err != nil {
		return name, fault.InvalidErr("domain", err)
	}
	if !name.IsRegistrable() {
		return name, fault.Invalid("domain", "must be a registrable domain (%s), not a name under it", name.Registrable)
	}
	return name, nil
}

// ruledOut returns the reasons, other than its site, that name cannot be
// brokered in env.
func (s *Service) ruledOut(ctx context.Context, env string, name domainname.Name) ([]string, error) {
	reasons := []string{}
	var open int64
	if err := s.db.WithContext(ctx).Model(&models.BrokerageCase{}).
		Where("environment = ? AND domain = ? AND closed_at IS NULL", env, name.ASCII).Count(&open).Error; err != nil {
		return nil, fmt.Errorf("find the open cases of %s: %w", name.ASCII, err)
	}
	if open > 0 {
		reasons = append(reasons, ReasonInOpenCase)
	}
	_, err := s.inventory.Find(ctx, env, name.ASCII)
	switch e, ok := fault.As(err); {
	case err == nil:
		reasons = append(reasons, ReasonListedForSale)
	case !ok || e.Code != fault.NotFound:
		return nil, err
	}
	switch r := s.registry.Check(ctx, name.ASCII); r.State {
	case availability.Registered:
	case availability.Unknown, availability.Unsupported:
		reasons = append(reasons, ReasonRegistrationUnknown)
	default: // available, premium or reserved: nobody owns it to sell it
		reasons = append(reasons, ReasonNotRegistered)
	}
	return reasons, nil
}

// siteCheck returns active_site, site_check_pending or "" for a site that
// is not active, from the day's probe of domain; without one it claims
// the check and adds its probe, so that of concurrent asks one starts it.
func (s *Service) siteCheck(ctx context.Context, domain string) (string, error) {
	now := s.now().UTC()
	var sc models.SiteCheck
	res := s.db.WithContext(ctx).Where("domain = ?", domain).Limit(1).Find(&sc)
	if res.Error != nil {
		return "", fmt.Errorf("read the site check of %s: %w", domain, res.Error)
	}
	switch {
	case res.RowsAffected == 1 && sc.Status == models.SiteCheckDone && sc.CheckedAt != nil && now.Sub(*sc.CheckedAt) < SiteCheckTTL:
		if sc.Active {
			return ReasonActiveSite, nil
		}
		return "", nil
	case res.RowsAffected == 1 && sc.Status == models.SiteCheckPending && now.Sub(sc.RequestedAt) < ProbeGrace:
		return ReasonSiteCheckPending, nil
	}
	// No check, a stale verdict, or a probe that never answered: claim the
	// check (a conditional write, so that of asks at once one wins) and add
	// its probe.
	err := s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		var claim *gorm.DB
		if res.RowsAffected == 0 {
			claim = tx.Clauses(clause.OnConflict{DoNothing: true}).
				Create(&models.SiteCheck{Domain: domain, Status: models.SiteCheckPending, RequestedAt: now})
		} else {
			claim = tx.Model(&models.SiteCheck{}).
				Where("domain = ? AND ((status = ? AND checked_at < ?) OR (status = ? AND requested_at < ?))", domain,
					models.SiteCheckDone, now.Add(-SiteCheckTTL), models.SiteCheckPending, now.Add(-ProbeGrace)).
				Updates(map[string]any{"status": models.SiteCheckPending, "requested_at": now})
		}
		if claim.Error != nil {
			return fmt.Errorf("claim the site check of %s: %w", domain, claim.Error)
		}
		if claim.RowsAffected == 0 { // another ask claimed it first
			return nil
		}
		tx.Add(tasks.BrokerageProbePayload{Domain: domain})
		return nil
	})
	return ReasonSiteCheckPending, err
}

// RecordProbe writes the verdict of a brokerage:probe of r.Domain in db
// as the site check of the day.
func RecordProbe(ctx context.Context, db *gorm.DB, r siteprobe.Result, now time.Time) error {
	now = now.UTC()
	sc := models.SiteCheck{Domain: r.Domain, Status: models.SiteCheckDone, Active: r.Reason.Active(), Reason: string(r.Reason),
		Signal: models.Cut(r.Signal, 200), RequestedAt: now, CheckedAt: &now}
	err := db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "domain"}},
		DoUpdates: clause.AssignmentColumns([]string{"status", "active", "reason", "signal", "checked_at"}),
	}).Create(&sc).Error
	if err != nil {
		return fmt.Errorf("record the site check of %s: %w", r.Domain, err)
	}
	return nil
}
