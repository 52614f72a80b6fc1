// Package order is the rules of partner sales (SPEC §3.1, §4.2): quotes
// that hold a listing for one partner, orders recorded against them, the
// moves of an order's life (one table, Moves), and refunds. Every change
// writes the order, its timeline and its event in one transaction
// (webhook.Emit through the outbox), so there is never an order without
// its event or an event without its order.
//
// A listing is held by a quote (listing.locked_until and held_by) and
// bought by an order (sold_at, and hidden from the marketplace); the
// conditional UPDATE that claims it is what lets exactly one of two
// concurrent orders for a name succeed.
package order

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/signedtoken"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
)

// Event types of an order's life (SPEC §6.2).
const (
	EventRecorded      = "order.recorded"
	EventPaid          = "order.paid"
	EventReviewCleared = "order.manual_review_cleared"
	EventTransferStart = "order.transfer_started"
	EventTransferDone  = "order.transfer_completed"
	// EventRefunded is a refund of the whole order (what was left of it),
	// or its cancellation; EventPartiallyRefunded a refund of part of it,
	// the order keeping its status.
	EventRefunded          = "order.refunded"
	EventPartiallyRefunded = "order.partially_refunded"
	EventSettled           = "order.settled"
)

// Actors of an order's timeline.
const (
	ActorPartner  = "partner"
	ActorOps      = "ops"
	ActorRegistry = "registry"
	// ActorSettlement is a settlement run.
	ActorSettlement = "settlement"
)

// Options are the operator's settings.
type Options struct {
	// QuoteTTL is how long a quote holds its listing (DOMAIND_QUOTE_TTL).
	QuoteTTL time.Duration
	// ReviewThresholdCents holds orders at or above it for manual review
	// (DOMAIND_REVIEW_THRESHOLD_CENTS).
	ReviewThresholdCents int64
	// QuoteHoldLimit is how many names one partner may hold with live
	// quotes in one environment at once (DOMAIND_QUOTE_HOLD_LIMIT).
	QuoteHoldLimit int
}

// Service is the partner sales of one database.
type Service struct {
	db        *gorm.DB
	outbox    *outbox.Outbox
	secretKey []byte
	quotes    *signedtoken.Signer
	opts      Options
	now       func() time.Time
}

// The defaults of Options' zero fields.
const (
	DefaultQuoteTTL             = 10 * time.Minute
	DefaultReviewThresholdCents = 500_000
	DefaultQuoteHoldLimit       = 20
)

// New returns the sales of db, writing events through ob; secretKey
// (DOMAIND_SECRET_KEY) signs quote tokens and seals list cursors.
func New(db *gorm.DB, ob *outbox.Outbox, secretKey []byte, opts Options, now func() time.Time) *Service {
	opts.QuoteTTL = cmp.Or(opts.QuoteTTL, DefaultQuoteTTL)
	opts.ReviewThresholdCents = cmp.Or(opts.ReviewThresholdCents, DefaultReviewThresholdCents)
	opts.QuoteHoldLimit = cmp.Or(opts.QuoteHoldLimit, DefaultQuoteHoldLimit)
	return &Service{db: db, outbox: ob, secretKey: secretKey, quotes: signedtoken.New(secretKey, "quote tokens", quoteTokenPrefix), opts: opts, now: now}
}

// Buyer is who the domain is sold to.
type Buyer struct {
	Email   string `json:"email"`
	Name    string `json:"name"`
	Country string `json:"country"`
}

// View is an order as partners and ops see it, and as order events carry
// it (data.order).
type View struct {
	PublicID            string     `json:"public_id"`
	PartnerID           string     `json:"partner_id"`
	Domain              string     `json:"domain"`
	Status              string     `json:"status"`
	SalePriceCents      int64      `json:"sale_price_cents"`
	CommissionCents     int64      `json:"commission_cents"`
	Currency            string     `json:"currency"`
	PaymentModel        string     `json:"payment_model"`
	Buyer               Buyer      `json:"buyer"`
	ExternalPaymentRef  string     `json:"external_payment_ref"`
	QuoteID             *string    `json:"quote_id"`
	Review              string     `json:"review"`
	RefundedCents       int64      `json:"refunded_cents"`
	Environment         string     `json:"environment"`
	CreatedAt           time.Time  `json:"created_at"`
	UpdatedAt           time.Time  `json:"updated_at"`
	TransferCompletedAt *time.Time `json:"transfer_completed_at"`
	// Timeline is every step, oldest first; events leave it out.
	Timeline []Step `json:"timeline,omitempty"`
}

// Step is a line of the timeline.
type Step struct {
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Status string    `json:"status"`
	Event  *string   `json:"event"`
	Note   string    `json:"note,omitempty"`
}

func newView(o models.Order) View {
	return View{PublicID: o.PublicID, PartnerID: o.PartnerID, Domain: o.Domain, Status: o.Status, SalePriceCents: o.SalePriceCents, CommissionCents: o.CommissionCents,
		Currency: o.Currency, PaymentModel: o.PaymentModel, Buyer: Buyer{Email: o.BuyerEmail, Name: o.BuyerName, Country: o.BuyerCountry},
		ExternalPaymentRef: o.ExternalPaymentRef, QuoteID: o.QuoteID, Review: o.Review, RefundedCents: o.RefundedCents,
		Environment: o.Environment, CreatedAt: o.CreatedAt.UTC(), UpdatedAt: o.UpdatedAt.UTC(), TransferCompletedAt: models.UTC(o.TransferCompletedAt)}
}

// withTimeline adds the order's steps to v.
func withTimeline(db *gorm.DB, v View) (View, error) {
	var steps []models.OrderStep
	if err := db.Where("order_id = ?", v.PublicID).Order("id").Find(&steps).Error; err != nil {
		return v, fmt.Errorf("read the timeline of %s: %w", v.PublicID, err)
	}
	v.Timeline = make([]Step, len(steps))
	for i, st := range steps {
		v.Timeline[i] = newStep(st)
	}
	return v, nil
}

// newStep is st as the timeline shows it.
func newStep(st models.OrderStep) Step {
	out := Step{At: st.At.UTC(), Actor: st.Actor, Status: st.Status, Note: st.Note}
	if st.Event != "" {
		out.Event = &st.Event
	}
	return out
}

// record writes a step of o's life and, when event is set, the event
// (data.order, plus extra's fields), in tx.
func (s *Service) record(tx *outbox.Tx, o models.Order, actor, event, note string, extra map[string]any) error {
	_, err := s.recordStep(tx, o, models.OrderStep{Actor: actor, Event: event, Note: note}, extra)
	return err
}

// recordStep is record of a step st (its actor, event, note and push; the
// rest is filled in), returning the step's id.
func (s *Service) recordStep(tx *outbox.Tx, o models.Order, st models.OrderStep, extra map[string]any) (int64, error) {
	st, err := writeStep(tx, o, st, extra, s.now().UTC(), false)
	return st.ID, err
}

// saleTime is now as an order made at now keeps it: to the microsecond,
// as Postgres stores it, so that the view recordSale returns is the one
// later reads make.
func saleTime(now time.Time) time.Time { return now.UTC().Truncate(time.Microsecond) }

// recordSale writes the first step of o, an order made in tx at
// o.CreatedAt, and its event, and returns o's view with its timeline: that
// one step, so nothing is read back after the commit. No delivery of the
// new order's events can be waiting, so none is looked for.
func recordSale(tx *outbox.Tx, o models.Order, actor, event, note string) (View, error) {
	st, err := writeStep(tx, o, models.OrderStep{Actor: actor, Event: event, Note: note}, nil, o.CreatedAt, true)
	if err != nil {
		return View{}, err
	}
	v := newView(o)
	v.Timeline = []Step{newStep(st)}
	return v, nil
}

// writeStep writes st, a step of o at now (its actor, event, note, push
// and recipient set; the rest is filled in), and its event when st has one; fresh
// says o was made in tx. It returns the step written.
func writeStep(tx *outbox.Tx, o models.Order, st models.OrderStep, extra map[string]any, now time.Time, fresh bool) (models.OrderStep, error) {
	st.OrderID, st.At, st.Status, st.Note = o.PublicID, now, o.Status, models.Cut(st.Note, 500)
	if err := tx.Create(&st).Error; err != nil {
		return st, fmt.Errorf("record a step of %s: %w", o.PublicID, err)
	}
	if st.Event == "" {
		return st, nil
	}
	_, err := webhook.EmitAll(tx, []webhook.Emission{{PartnerID: o.PartnerID, Environment: o.Environment, Subject: o.PublicID,
		Type: st.Event, Data: eventData(o, extra), New: fresh}}, now)
	return st, err
}

// eventData is the data of an event about o: the order, and extra.
func eventData(o models.Order, extra map[string]any) map[string]any {
	data := map[string]any{"order": newView(o)}
	for k, v := range extra {
		data[k] = v
	}
	return data
}

// Get returns the partner's order in env with its timeline; another
// partner's or environment's is not_found.
func (s *Service) Get(ctx context.Context, partnerID, env, publicID string) (View, error) {
	var o models.Order
	err := s.db.WithContext(ctx).Take(&o, "public_id = ? AND partner_id = ? AND environment = ?", publicID, partnerID, env).Error
	if err := models.Found(err, "order "+publicID); err != nil {
		return View{}, err
	}
	return withTimeline(s.db.WithContext(ctx), newView(o))
}

// Ops returns any order with its timeline, for ops.
func (s *Service) Ops(ctx context.Context, publicID string) (View, error) {
	o, err := find(s.db.WithContext(ctx), publicID)
	if err != nil {
		return View{}, err
	}
	return withTimeline(s.db.WithContext(ctx), newView(o))
}

// find loads an order by id, not_found if there is none.
func find(db *gorm.DB, publicID string) (models.Order, error) {
	var o models.Order
	return o, models.Found(db.Take(&o, "public_id = ?", publicID).Error, "order "+publicID)
}
