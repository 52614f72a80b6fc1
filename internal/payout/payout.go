// Package payout pays partners what the service owes them: the commission
// of the sales the service collected for them (hosted checkout), their
// commission of the fees of the brokered deals they brought
// (internal/brokerage), and affiliates' commission of the sales their
// links referred, payable once those settle (internal/referral).
//
// A settlement run opens the payouts of its period (Open), one per
// partner, environment and currency whose settled orders leave the
// service owing money, in the transaction that finishes the run: the
// amount is the period's partner_payable lines, read from the ledger (a
// referred order's are its affiliate's).
// Finance pays outside the service and marks the payout paid with the
// transfer's reference (MarkPaid), which posts payable to cash in the
// ledger; marking it paid again with the same reference changes nothing.
package payout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/internal/period"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
)

// Service lists payouts and marks them paid.
type Service struct {
	db        *gorm.DB
	secretKey []byte // seals the lists' cursors
	now       func() time.Time
}

// New returns a Service over db, sealing its cursors with secretKey
// (DOMAIND_SECRET_KEY).
func New(db *gorm.DB, secretKey []byte, now func() time.Time) *Service {
	return &Service{db: db, secretKey: secretKey, now: now}
}

// Open writes in tx a pending payout for each partner, environment and
// currency that period p leaves the service owing money: the
// partner_payable lines of the orders settled in p, and those of the
// brokered deals closed in p (lines created from p.Start to before p.End).
// Payouts the period has already are left as they are.
func Open(tx *gorm.DB, p period.Period, now time.Time) error {
	type owing struct {
		PartnerID, Environment, Currency string
		Amount                           int64
	}
	var owed []owing
	err := tx.Raw(`SELECT partner_id, environment, currency, -SUM(amount_cents) AS amount FROM (
  SELECT l.partner_id, l.environment, l.currency, l.amount_cents FROM ledger_entries l
    JOIN orders o ON o.public_id = l.order_id WHERE o.settled_period = ? AND l.account = ?
  UNION ALL
  SELECT l.partner_id, l.environment, l.currency, l.amount_cents FROM ledger_entries l
    WHERE l.case_id IS NOT NULL AND l.account = ? AND l.created_at >= ? AND l.created_at < ?
) payable GROUP BY partner_id, environment, currency HAVING SUM(amount_cents) < 0
ORDER BY partner_id, environment, currency`,
		p.Start, ledger.Payable, ledger.Payable, p.Start, p.End).Scan(&owed).Error
	if err != nil {
		return fmt.Errorf("sum the payouts of %s: %w", p.Start, err)
	}
	if len(owed) == 0 {
		return nil
	}
	payouts := make([]models.Payout, len(owed))
	for i, o := range owed {
		payouts[i] = models.Payout{ID: secret.NewID("po_"), PartnerID: o.PartnerID, Environment: o.Environment, Currency: o.Currency,
			PeriodStart: p.Start, PeriodEnd: p.End, AmountCents: o.Amount, Status: models.PayoutPending, CreatedAt: now.UTC()}
	}
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(payouts, 500).Error; err != nil {
		return fmt.Errorf("open the payouts of %s: %w", p.Start, err)
	}
	return nil
}

// MarkPaid records payout id as paid by the transfer of reference and
// posts it to the ledger. A payout paid with the same reference is
// returned as it is; with another, it is a conflict.
func (s *Service) MarkPaid(ctx context.Context, id, reference string) (models.Payout, error) {
	reference = strings.TrimSpace(reference)
	if err := models.CheckReference(reference, "the payout"); err != nil {
		return models.Payout{}, err
	}
	var p models.Payout
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := models.ForUpdate(tx).Take(&p, "id = ?", id).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return fault.New(fault.NotFound, "no payout %s", id)
		}
		if err != nil {
			return fmt.Errorf("find payout %s: %w", id, err)
		}
		if p.Status == models.PayoutPaid {
			if p.Reference == reference {
				return nil
			}
			return fault.New(fault.Conflict, "payout %s was already paid, with reference %q", id, p.Reference)
		}
		now := s.now().UTC()
		ref := ledger.Ref{PartnerID: p.PartnerID, Environment: p.Environment, Currency: p.Currency, Kind: ledger.KindPayout, PayoutID: &p.ID}
		if err := ledger.Post(tx, ref, now, ledger.Line{Account: ledger.Payable, AmountCents: p.AmountCents},
			ledger.Line{Account: ledger.Cash, AmountCents: -p.AmountCents}); err != nil {
			return err
		}
		p.Status, p.Reference, p.PaidAt = models.PayoutPaid, reference, &now
		return tx.Model(&p).Select("status", "reference", "paid_at").Updates(&p).Error
	})
	return p, err
}

// Filter picks payouts; empty fields pick all.
type Filter struct {
	PartnerID, Environment, Status string
	// Limit is the page's size (1 to MaxLimit); Cursor the page's start,
	// the next_cursor of the page before.
	Limit  int
	Cursor string
}

// Statuses are the states a Filter may pick.
var Statuses = []string{models.PayoutPending, models.PayoutPaid}

// payoutPages pages the payout lists, newest period first.
var payoutPages = pagecursor.Newest[models.Payout]{Name: "payouts/v1", KeyCol: "period_start", IDCol: "id",
	Key: func(p models.Payout) (time.Time, string) { return p.PeriodStart, p.ID }}

// List returns a page of the payouts f picks, newest period first, and
// the cursor of the next page ("" after the last).
func (s *Service) List(ctx context.Context, f Filter) ([]models.Payout, string, error) {
	if f.Status != "" && !slices.Contains(Statuses, f.Status) {
		return nil, "", fault.Invalid("status", "must be one of %s", strings.Join(Statuses, ", "))
	}
	if err := models.CheckEnvironmentFilter(f.Environment); err != nil {
		return nil, "", err
	}
	q := s.db.WithContext(ctx).Model(&models.Payout{})
	q = models.Equal(q, "partner_id", f.PartnerID, "environment", f.Environment, "status", f.Status)
	return payoutPages.Page(q, s.secretKey, f.Cursor, f.Limit, f.PartnerID, f.Environment, f.Status)
}

// View is a payout as the API shows it.
type View struct {
	ID          string     `json:"id"`
	PartnerID   string     `json:"partner_id"`
	Environment string     `json:"environment"`
	AmountCents int64      `json:"amount_cents"`
	Currency    string     `json:"currency"`
	Period      Span       `json:"period"`
	Status      string     `json:"status"`
	Reference   *string    `json:"reference"`
	PaidAt      *time.Time `json:"paid_at"`
	CreatedAt   time.Time  `json:"created_at"`
}

// Span is the settlement period a payout is for.
type Span struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// NewView returns p's view.
func NewView(p models.Payout) View {
	v := View{ID: p.ID, PartnerID: p.PartnerID, Environment: p.Environment, AmountCents: p.AmountCents, Currency: p.Currency,
		Period: Span{Start: p.PeriodStart.UTC(), End: p.PeriodEnd.UTC()}, Status: p.Status, CreatedAt: p.CreatedAt.UTC()}
	if p.Reference != "" {
		v.Reference = &p.Reference
	}
	if p.PaidAt != nil {
		at := p.PaidAt.UTC()
		v.PaidAt = &at
	}
	return v
}

// Views returns the views of ps.
func Views(ps []models.Payout) []View {
	out := make([]View, len(ps))
	for i, p := range ps {
		out[i] = NewView(p)
	}
	return out
}

// Total is a partner's payouts of one currency added up: paid, and still
// pending.
type Total struct {
	Currency     string `json:"currency"`
	PaidCents    int64  `json:"paid_cents"`
	PendingCents int64  `json:"pending_cents"`
}

// Totals adds up partnerID's payouts in env by currency.
func (s *Service) Totals(ctx context.Context, partnerID, env string) ([]Total, error) {
	out := []Total{}
	err := s.db.WithContext(ctx).Model(&models.Payout{}).Where("partner_id = ? AND environment = ?", partnerID, env).
		Select(`currency,
		COALESCE(SUM(CASE WHEN status = ? THEN amount_cents END), 0) AS paid_cents,
		COALESCE(SUM(CASE WHEN status = ? THEN amount_cents END), 0) AS pending_cents`, models.PayoutPaid, models.PayoutPending).
		Group("currency").Order("currency").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("add up payouts: %w", err)
	}
	return out, nil
}
