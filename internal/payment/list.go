package payment

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/models"
)

// Statuses are the payment statuses, in the order of a payment's life.
var Statuses = []string{models.PaymentPending, models.PaymentSucceeded, models.PaymentFailed,
	models.PaymentPartiallyRefunded, models.PaymentRefunded}

// Filter selects payments, newest first.
type Filter struct {
	Status, OrderID, SessionID string
	From, To                   *time.Time // on created_at: From ≤ t < To
	Limit                      int
	Cursor                     string
}

// View is a payment as finance reads it: each charge with what it paid
// for or what returned it.
type View struct {
	ID       string  `json:"id"`
	Provider string  `json:"provider"`
	ChargeID *string `json:"charge_id"`
	// ProviderRef is the processor's page the buyer paid on (a Stripe
	// Checkout Session, cs_…), "" for a card taken on our page.
	ProviderRef   string  `json:"provider_ref"`
	AmountCents   int64   `json:"amount_cents"`
	Currency      string  `json:"currency"`
	Status        string  `json:"status"`
	OrderID       *string `json:"order_id"`
	RefundID      *string `json:"refund_id"`
	RefundedCents int64   `json:"refunded_cents"`
	SessionID     string  `json:"session_id"`
	PartnerID     string  `json:"partner_id"`
	Environment   string  `json:"environment"`
	Domain        string  `json:"domain"`
	CardLast4     string  `json:"card_last4"`
	Note          string  `json:"note"`
	// ReturnGivenUpAt is when giving back a charge that paid for no order
	// was given up, for ops to pay back by hand; PaidByHandAt and
	// PaidByHandReference when and how they did (PaidBackByHand).
	ReturnGivenUpAt     *time.Time `json:"return_given_up_at"`
	PaidByHandAt        *time.Time `json:"paid_by_hand_at"`
	PaidByHandReference string     `json:"paid_by_hand_reference"`
	CreatedAt           time.Time  `json:"created_at"`
	UpdatedAt           time.Time  `json:"updated_at"`
}

func newView(p models.Payment) View {
	v := View{ID: p.ID, Provider: p.Provider, ChargeID: p.ChargeID, ProviderRef: p.ProviderRef, AmountCents: p.AmountCents, Currency: p.Currency, Status: p.Status,
		OrderID: p.OrderID, RefundedCents: p.RefundedCents, SessionID: p.SessionID, PartnerID: p.PartnerID, Environment: p.Environment,
		Domain: p.Domain, CardLast4: p.CardLast4, Note: p.Note, ReturnGivenUpAt: models.UTC(p.ReturnGivenUpAt), PaidByHandAt: models.UTC(p.PaidByHandAt),
		PaidByHandReference: p.PaidByHandReference, CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC()}
	if p.RefundID != "" {
		v.RefundID = &p.RefundID
	}
	return v
}

// paymentPages pages the payments list.
var paymentPages = pagecursor.Newest[models.Payment]{Name: "payments/v1", KeyCol: "created_at", IDCol: "id",
	Key: func(p models.Payment) (time.Time, string) { return p.CreatedAt, p.ID }}

// List returns a page of the payments f selects and the cursor of the
// next page ("" after the last). A status that is not one, or an id too
// long to be one, is a validation error naming its field.
func (b *Book) List(ctx context.Context, f Filter) ([]View, string, error) {
	q, err := b.selecting(ctx, f)
	if err != nil {
		return nil, "", err
	}
	rows, next, err := paymentPages.Page(q, b.secretKey, f.Cursor, f.Limit,
		f.Status, f.OrderID, f.SessionID, pagecursor.TimeKey(f.From), pagecursor.TimeKey(f.To))
	if err != nil {
		return nil, "", err
	}
	out := make([]View, len(rows))
	for i, p := range rows {
		out[i] = newView(p)
	}
	return out, next, nil
}

// Total sums the payments of one status and currency.
type Total struct {
	Status        string `json:"status"`
	Currency      string `json:"currency"`
	Count         int64  `json:"count"`
	AmountCents   int64  `json:"amount_cents"`
	RefundedCents int64  `json:"refunded_cents"`
}

// Totals sums every payment f selects (all pages), by status and
// currency, in the order of Statuses.
func (b *Book) Totals(ctx context.Context, f Filter) ([]Total, error) {
	q, err := b.selecting(ctx, f)
	if err != nil {
		return nil, err
	}
	var out []Total
	err = q.Select("status, currency, COUNT(*) AS count, COALESCE(SUM(amount_cents), 0) AS amount_cents, COALESCE(SUM(refunded_cents), 0) AS refunded_cents").
		Group("status, currency").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("sum payments: %w", err)
	}
	slices.SortFunc(out, func(a, b Total) int {
		if c := slices.Index(Statuses, a.Status) - slices.Index(Statuses, b.Status); c != 0 {
			return c
		}
		return strings.Compare(a.Currency, b.Currency)
	})
	return out, nil
}

// selecting is the query of the payments f selects.
func (b *Book) selecting(ctx context.Context, f Filter) (*gorm.DB, error) {
	switch {
	case f.Status != "" && !slices.Contains(Statuses, f.Status):
		return nil, fault.Invalid("status", "is not a payment status (%s)", strings.Join(Statuses, ", "))
	case len(f.OrderID) > 40:
		return nil, fault.Invalid("order_id", "is not an order's public_id")
	case len(f.SessionID) > 40:
		return nil, fault.Invalid("session_id", "is not a checkout session's id")
	}
	q := b.db.WithContext(ctx).Model(&models.Payment{})
	q = models.Equal(q, "status", f.Status, "order_id", f.OrderID, "session_id", f.SessionID)
	if f.From != nil {
		q = q.Where("created_at >= ?", f.From.UTC())
	}
	if f.To != nil {
		q = q.Where("created_at < ?", f.To.UTC())
	}
	return q, nil
}
