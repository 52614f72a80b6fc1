package brokerage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/mail"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/idempotency"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
)

// MaxBudgetCents bounds a buyer's budget: a billion dollars.
const MaxBudgetCents = 100_000_000_000

// Tiers are the brokerage tiers, in order (FeeBPS has their fees).
var Tiers = slices.Sorted(maps.Keys(FeeBPS))

// NewCase is what a partner opens a case with.
type NewCase struct {
	Domain     string `json:"domain"`
	Tier       string `json:"tier"`
	BuyerEmail string `json:"buyer_email"`
	// Budget is the buyer's budget in cents of Currency (SPEC §2.13).
	Budget *int64 `json:"budget"`
	// BudgetCents is Budget's deprecated name, still taken
	// (BudgetCentsDeprecated).
	BudgetCents *int64 `json:"budget_cents"`
}

// BudgetCentsDeprecated says in names the budget by its deprecated name.
func (in NewCase) BudgetCentsDeprecated() bool { return in.BudgetCents != nil }

// budget is the buyer's budget in cents, under either name, and the name
// it was given by.
func (in NewCase) budget() (cents int64, field string, err error) {
	switch {
	case in.Budget != nil && in.BudgetCents != nil && *in.Budget != *in.BudgetCents:
		return 0, "", fault.Invalid("budget_cents", "differs from budget; send budget alone (budget_cents is its deprecated name)")
	case in.Budget != nil:
		return *in.Budget, "budget", nil
	case in.BudgetCents != nil:
		return *in.BudgetCents, "budget_cents", nil
	}
	return 0, "", fault.Invalid("budget", "is required: the buyer's budget in cents of %s", Currency)
}

// check validates in, returning the domain's name as stored and the
// budget in cents.
func (in NewCase) check() (string, int64, error) {
	name, err := parseDomain(in.Domain)
	if err != nil {
		return "", 0, err
	}
	if !slices.Contains(Tiers, in.Tier) {
		return "", 0, fault.Invalid("tier", "must be one of %s", strings.Join(Tiers, ", "))
	}
	if a, err := mail.ParseAddress(in.BuyerEmail); err != nil || a.Address != in.BuyerEmail || len(in.BuyerEmail) > 254 {
		return "", 0, fault.Invalid("buyer_email", "must be an email address (ada@example.com), at most 254 bytes")
	}
	budget, field, err := in.budget()
	if err != nil {
		return "", 0, err
	}
	if budget < 1 || budget > MaxBudgetCents {
		return "", 0, fault.Invalid(field, "must be from 1 to %d (cents of %s)", MaxBudgetCents, Currency)
	}
	return name.ASCII, budget, nil
}

// Open opens a case for the partner in env, if the domain is eligible:
// otherwise it is a conflict naming the reasons (site_check_pending among
// them while the site is looked at; ask again later). Of two cases racing
// for one domain, one is opened. The case's transaction marks the request's
// Idempotency-Key as carried out (idempotency.CarriedOut), so that a retry
// after a lost answer is told the case was opened.
func (s *Service) Open(ctx context.Context, partnerID, env string, in NewCase) (View, error) {
	domain, budget, err := in.check()
	if err != nil {
		return View{}, err
	}
	e, err := s.Eligibility(ctx, env, domain)
	if err != nil {
		return View{}, err
	}
	if e.Status != Eligible {
		return View{}, notEligible(domain, e.Reasons)
	}
	now := s.now().UTC()
	c := models.BrokerageCase{ID: secret.NewID("bc_"), PartnerID: partnerID, Environment: env, Domain: domain, Tier: in.Tier,
		BuyerEmail: in.BuyerEmail, BudgetCents: budget, Currency: Currency, Status: models.CaseOpen, CreatedAt: now, UpdatedAt: now}
	var v View
	err = s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		if err := tx.Create(&c).Error; err != nil {
			if errors.Is(err, gorm.ErrDuplicatedKey) {
				return notEligible(domain, []string{ReasonInOpenCase})
			}
			return fmt.Errorf("open a brokerage case for %s: %w", domain, err)
		}
		if err := s.recordStep(tx, c, models.BrokerageStep{Actor: ActorPartner, Note: "opened by the partner, tier " + in.Tier, Shared: true}, now); err != nil {
			return err
		}
		// Read in the transaction: a case whose answer cannot be made is
		// not opened, so a retry opens it instead of finding it open.
		var err error
		if v, err = withTimeline(tx.DB, s.newView(c), forOutside); err != nil {
			return err
		}
		return idempotency.CarriedOut(ctx, tx.DB)
	})
	if err != nil {
		return View{}, err
	}
	return v, nil
}

// notEligible is the conflict of a case refused for reasons.
func notEligible(domain string, reasons []string) error {
	msg := fmt.Sprintf("%s is not eligible for brokerage: %s", domain, strings.Join(reasons, ", "))
	if slices.Contains(reasons, ReasonSiteCheckPending) {
		msg += " (its site is being checked: poll GET /api/partner/v1/brokerage/eligibility until it is decided)"
	}
	e := fault.New(fault.Conflict, "%s", msg)
	if slices.Contains(reasons, ReasonSiteCheckPending) || slices.Contains(reasons, ReasonRegistrationUnknown) {
		e.Err = fault.ErrRetryLater
	}
	return e
}

// recordStep writes a step of c's life at now (its actor, event, amount
// and note; the rest is filled in) and, when the step has an event, the
// event with the case, in tx.
func (s *Service) recordStep(tx *outbox.Tx, c models.BrokerageCase, st models.BrokerageStep, now time.Time) error {
	st.CaseID, st.At, st.Status, st.Note = c.ID, now, c.Status, models.Cut(st.Note, 500)
	if err := tx.Create(&st).Error; err != nil {
		return fmt.Errorf("record a step of %s: %w", c.ID, err)
	}
	if st.Event == "" {
		return nil
	}
	_, err := webhook.Emit(tx, c.PartnerID, c.Environment, c.ID, st.Event, map[string]any{"case": s.newView(c)}, now)
	return err
}

// Filter selects cases, newest first. An empty PartnerID or Environment
// means every partner or environment (ops).
type Filter struct {
	PartnerID, Environment, Status string
	Limit                          int
	Cursor                         string
}

// Statuses are the case statuses, in the order of a case's life.
var Statuses = []string{models.CaseOpen, models.CaseContactingOwner, models.CaseNegotiating, models.CaseClosedDeal, models.CaseClosedNoDeal}

// casePages pages the case lists.
var casePages = pagecursor.Newest[models.BrokerageCase]{Name: "brokerage/v1", KeyCol: "created_at", IDCol: "id",
	Key: func(c models.BrokerageCase) (time.Time, string) { return c.CreatedAt, c.ID }}

// List returns a page of the cases f selects, without their timelines,
// and the cursor of the next page ("" after the last).
func (s *Service) List(ctx context.Context, f Filter) ([]View, string, error) {
	if f.Status != "" && !slices.Contains(Statuses, f.Status) {
		return nil, "", fault.Invalid("status", "must be one of %s", strings.Join(Statuses, ", "))
	}
	q := s.db.WithContext(ctx).Model(&models.BrokerageCase{})
	q = models.Equal(q, "partner_id", f.PartnerID, "environment", f.Environment, "status", f.Status)
	cases, next, err := casePages.Page(q, s.opts.SecretKey, f.Cursor, f.Limit, f.PartnerID, f.Environment, f.Status)
	if err != nil {
		return nil, "", err
	}
	out := make([]View, len(cases))
	for i, c := range cases {
		out[i] = s.newView(c)
	}
	return out, next, nil
}
