// Package brokerage is the rules of brokered sales (SPEC §4.2, §6.2): a
// partner asks the marketplace to buy, for its buyer, a domain someone
// else has registered. Ops work the case (contact the owner, record
// offers, close it with or without a deal); the buyer follows it on a
// no-login progress page whose link is a signed token.
//
// A domain is eligible when none of these holds (the reasons, in this
// order): it is in an open case of the environment (in_open_case); it is
// for sale in the environment's inventory, and should be bought there
// (listed_for_sale); the registry does not know it as registered
// (not_registered), or could not say (registration_unknown); it runs an
// active web site (active_site). The site is looked at only when nothing
// else rules the domain out, by a brokerage:probe task (internal/siteprobe)
// whose verdict is kept a day (SiteCheckTTL); while it runs, eligibility
// is pending (reason site_check_pending) and the partner asks again.
// Concurrent asks start one probe: the site check's row is claimed by a
// conditional write, and only the claimant adds the task, in the same
// transaction (outbox).
//
// A case moves by Moves: open → contacting_owner → negotiating (each
// offer) → closed_deal, or closed_no_deal from any open status. Every
// move adds a step to the case's timeline.
//
// Money, when a deal closes at price P (integer cents, USD): the
// marketplace's fee is a share of P by tier (FeeBPS: managed 15 %,
// self-serve 8 %), rounded half to even once (ledger.Share); the
// partner that opened the case earns its commission rate
// (models.Partner.CommissionBPS) of the fee, rounded once the same way.
// Both rates and amounts are recorded on the case. The same transaction
// posts the ledger's brokerage transaction (cash +fee, brokerage_fees
// −fee, commission +commission, partner_payable −commission; package
// ledger) and emits brokerage.case_completed with the case and its deal.
// The partner's payable is paid with the payout of the settlement period
// the deal closed in (internal/payout).
package brokerage

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/availability"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/inventory"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/signedtoken"
	"github.com/domaind/domaind/models"
)

// FeeBPS is the marketplace's fee of a brokered deal's price by tier, in
// basis points: its keys are the tiers.
var FeeBPS = map[string]int{models.TierManaged: 1500, models.TierSelfServe: 800}

// EventCaseCompleted is emitted when a case closes with a deal.
const EventCaseCompleted = "brokerage.case_completed"

// Actors of a case's timeline.
const (
	ActorPartner = "partner"
	ActorOps     = "ops"
)

// Currency is the currency of budgets and deals.
const Currency = "USD"

// ProgressPath is where the buyer's progress page is served; its link
// adds ?t= and the token.
const ProgressPath = "/brokerage/progress"

// progressTokenPrefix versions the progress links' tokens.
const progressTokenPrefix = "bp1."

// Options are the service's settings.
type Options struct {
	// BaseURL is the service's public URL (DOMAIND_BASE_URL), for progress links.
	BaseURL string
	// SecretKey (DOMAIND_SECRET_KEY) signs progress links and seals list cursors.
	SecretKey []byte
}

// Service is the brokerage of one database.
type Service struct {
	db        *gorm.DB
	outbox    *outbox.Outbox
	registry  *availability.Checker
	inventory *inventory.Service
	links     *signedtoken.Signer
	opts      Options
	now       func() time.Time
}

// New returns the brokerage of db, writing tasks and events through ob,
// asking registry whether names are registered and inv whether they are
// for sale.
func New(db *gorm.DB, ob *outbox.Outbox, registry *availability.Checker, inv *inventory.Service, opts Options, now func() time.Time) *Service {
	return &Service{db: db, outbox: ob, registry: registry, inventory: inv,
		links: signedtoken.New(opts.SecretKey, "brokerage progress links", progressTokenPrefix), opts: opts, now: now}
}

// View is a case as partners, ops and the case_completed event see it.
type View struct {
	CaseID      string     `json:"case_id"`
	PartnerID   string     `json:"partner_id"`
	Environment string     `json:"environment"`
	Domain      string     `json:"domain"`
	Tier        string     `json:"tier"`
	BuyerEmail  string     `json:"buyer_email"`
	BudgetCents int64      `json:"budget_cents"`
	Currency    string     `json:"currency"`
	Status      string     `json:"status"`
	Deal        *Deal      `json:"deal"`
	ProgressURL string     `json:"progress_url"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	ClosedAt    *time.Time `json:"closed_at"`
	// Timeline is every step, oldest first; lists and events leave it out.
	Timeline []Step `json:"timeline,omitempty"`
}

// Deal is the outcome of a case closed with a deal: its price, the
// marketplace's fee and the partner's commission of the fee.
type Deal struct {
	PriceCents      int64 `json:"price_cents"`
	FeeBPS          int   `json:"fee_bps"`
	FeeCents        int64 `json:"fee_cents"`
	CommissionBPS   int   `json:"commission_bps"`
	CommissionCents int64 `json:"commission_cents"`
}

// Step is a line of the timeline.
type Step struct {
	At          time.Time `json:"at"`
	Actor       string    `json:"actor"`
	Status      string    `json:"status"`
	Event       *string   `json:"event"`
	AmountCents *int64    `json:"amount_cents"`
	Note        string    `json:"note,omitempty"`
	// Internal, in ops' view, marks a step whose note and amount the
	// partner and the buyer do not see (they see its status move alone).
	Internal bool `json:"internal,omitempty"`
}

func (s *Service) newView(c models.BrokerageCase) View {
	v := View{CaseID: c.ID, PartnerID: c.PartnerID, Environment: c.Environment, Domain: c.Domain, Tier: c.Tier,
		BuyerEmail: c.BuyerEmail, BudgetCents: c.BudgetCents, Currency: c.Currency, Status: c.Status,
		ProgressURL: s.progressURL(c.ID), CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
	if c.ClosedAt != nil {
		at := c.ClosedAt.UTC()
		v.ClosedAt = &at
	}
	if c.Status == models.CaseClosedDeal {
		v.Deal = &Deal{PriceCents: c.PriceCents, FeeBPS: c.FeeBPS, FeeCents: c.FeeCents, CommissionBPS: c.CommissionBPS, CommissionCents: c.CommissionCents}
	}
	return v
}

// progressClaims is what a progress link's token vouches for.
type progressClaims struct {
	CaseID string `json:"id"`
}

// progressURL is the buyer's no-login link to case id's progress page.
func (s *Service) progressURL(id string) string {
	t, _ := s.links.Sign(progressClaims{CaseID: id}) // a string always marshals
	return s.opts.BaseURL + ProgressPath + "?" + url.Values{"t": {t}}.Encode()
}

// audience is who a view is for: ops see every step whole; the partner
// and the buyer see an internal step's status move alone.
type audience bool

const (
	forOps     audience = true
	forOutside audience = false
)

// withTimeline adds the case's steps to v, as a sees them.
func withTimeline(db *gorm.DB, v View, a audience) (View, error) {
	var steps []models.BrokerageStep
	if err := db.Where("case_id = ?", v.CaseID).Order("id").Find(&steps).Error; err != nil {
		return v, fmt.Errorf("read the timeline of %s: %w", v.CaseID, err)
	}
	v.Timeline = make([]Step, len(steps))
	for i, st := range steps {
		v.Timeline[i] = Step{At: st.At.UTC(), Actor: st.Actor, Status: st.Status}
		if st.Event != "" {
			v.Timeline[i].Event = &st.Event
		}
		switch {
		case st.Shared:
			v.Timeline[i].AmountCents, v.Timeline[i].Note = st.AmountCents, st.Note
		case a == forOps:
			v.Timeline[i].AmountCents, v.Timeline[i].Note, v.Timeline[i].Internal = st.AmountCents, st.Note, true
		}
	}
	return v, nil
}

// find loads a case by id, not_found if there is none.
func find(db *gorm.DB, id string) (models.BrokerageCase, error) {
	var c models.BrokerageCase
	return c, models.Found(db.Take(&c, "id = ?", id).Error, "brokerage case "+id)
}

// Get returns the partner's case in env with its timeline as the partner
// sees it; another partner's or environment's is not_found.
func (s *Service) Get(ctx context.Context, partnerID, env, id string) (View, error) {
	return s.view(ctx, id, forOutside, func(c models.BrokerageCase) bool { return c.PartnerID == partnerID && c.Environment == env })
}

// view returns case id with its timeline as a sees it; a case mine
// refuses is not_found (nil takes any).
func (s *Service) view(ctx context.Context, id string, a audience, mine func(models.BrokerageCase) bool) (View, error) {
	c, err := find(s.db.WithContext(ctx), id)
	if err == nil && mine != nil && !mine(c) {
		err = fault.New(fault.NotFound, "no brokerage case %s", id)
	}
	if err != nil {
		return View{}, err
	}
	return withTimeline(s.db.WithContext(ctx), s.newView(c), a)
}

// Progress returns the case a progress link's token names, with its
// timeline as the buyer sees it; a token that is not one of ours is not_found.
func (s *Service) Progress(ctx context.Context, token string) (View, error) {
	var claims progressClaims
	if err := s.links.Open(token, &claims); err != nil || claims.CaseID == "" {
		return View{}, fault.New(fault.NotFound, "this progress link is not valid: check that it was copied whole")
	}
	return s.view(ctx, claims.CaseID, forOutside, nil)
}
