package settlement

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/models"
)

// Transaction is a sale or a refund of a partner's order, as the ledger
// has it: AmountCents is what the buyer paid (a sale) or got back (a
// refund, negative), CommissionCents the partner's share it added or took
// back.
type Transaction struct {
	ID              string    `json:"id"`
	Kind            string    `json:"kind"`
	OrderID         string    `json:"order_id"`
	Domain          string    `json:"domain"`
	OrderStatus     string    `json:"order_status"`
	PaymentModel    string    `json:"payment_model"`
	Currency        string    `json:"currency"`
	AmountCents     int64     `json:"amount_cents"`
	CommissionCents int64     `json:"commission_cents"`
	CreatedAt       time.Time `json:"created_at"`
}

// TransactionTotals add up every transaction of a filter (not only a
// page's), per currency: GMVCents the sales less the refunds.
type TransactionTotals struct {
	Currency        string `json:"currency"`
	GMVCents        int64  `json:"gmv_cents"`
	CommissionCents int64  `json:"commission_cents"`
	Count           int    `json:"count"`
}

// TransactionFilter picks a partner's transactions in an environment.
type TransactionFilter struct {
	PartnerID, Environment string
	// From and To bound created_at (From ≤ t < To); OrderStatus and
	// PaymentModel pick by the order's.
	From, To                  *time.Time
	OrderStatus, PaymentModel string
	Limit                     int
	Cursor                    string
}

// Transactions returns a page of the transactions f picks, newest first,
// the cursor of the next page ("" after the last), and the totals of all
// of them.
func (s *Service) Transactions(ctx context.Context, f TransactionFilter) ([]Transaction, string, []TransactionTotals, error) {
	var err error
	if f.Limit, err = pagecursor.Limit(f.Limit, DefaultLimit, MaxLimit); err != nil {
		return nil, "", nil, err
	}
	if f.PaymentModel != "" && !slices.Contains([]string{models.PaymentPartnerCollected, models.PaymentHosted}, f.PaymentModel) {
		return nil, "", nil, fault.Invalid("payment_model", "must be partner_collected or hosted")
	}
	filtered := func() *gorm.DB {
		q := s.db.WithContext(ctx).Table("ledger_entries l").Joins("JOIN orders o ON o.public_id = l.order_id").
			Where("l.partner_id = ? AND l.environment = ? AND l.kind IN ?", f.PartnerID, f.Environment, []string{ledger.KindSale, ledger.KindRefund})
		if f.From != nil {
			q = q.Where("l.created_at >= ?", f.From.UTC())
		}
		if f.To != nil {
			q = q.Where("l.created_at < ?", f.To.UTC())
		}
		if f.OrderStatus != "" {
			q = q.Where("o.status = ?", f.OrderStatus)
		}
		if f.PaymentModel != "" {
			q = q.Where("o.payment_model = ?", f.PaymentModel)
		}
		return q
	}
	fingerprint := pagecursor.Fingerprint("transactions/v1", f.PartnerID, f.Environment, timeKey(f.From), timeKey(f.To), f.OrderStatus, f.PaymentModel)
	page := filtered()
	if f.Cursor != "" {
		c, err := pagecursor.Decode(s.secretKey, f.Cursor, fingerprint)
		if err != nil {
			return nil, "", nil, err
		}
		at := time.Unix(0, c.Key).UTC()
		page = page.Where("l.created_at < ? OR (l.created_at = ? AND l.txn_id < ?)", at, at, c.ID)
	}
	var rows []Transaction
	err = page.Select(`l.txn_id AS id, l.kind, l.order_id, o.domain, o.status AS order_status, o.payment_model, l.currency,
		l.created_at, `+sumsOf("amount_cents"), ledger.Sales, ledger.Commission).
		Group("l.txn_id, l.kind, l.order_id, o.domain, o.status, o.payment_model, l.currency, l.created_at").
		Order("l.created_at DESC, l.txn_id DESC").Limit(f.Limit + 1).Scan(&rows).Error
	if err != nil {
		return nil, "", nil, fmt.Errorf("list transactions: %w", err)
	}
	next := ""
	if len(rows) > f.Limit {
		rows = rows[:f.Limit]
		last := rows[len(rows)-1]
		next = pagecursor.Encode(s.secretKey, pagecursor.Cursor{Query: fingerprint, Key: last.CreatedAt.UnixNano(), ID: last.ID})
	}
	for i := range rows {
		rows[i].CreatedAt = rows[i].CreatedAt.UTC()
	}
	totals := []TransactionTotals{}
	err = filtered().Select(`l.currency, COUNT(DISTINCT l.txn_id) AS count, `+sumsOf("gmv_cents"), ledger.Sales, ledger.Commission).
		Group("l.currency").Order("l.currency").Scan(&totals).Error
	if err != nil {
		return nil, "", nil, fmt.Errorf("total transactions: %w", err)
	}
	return rows, next, totals, nil
}

// sumsOf selects the buyer's side of ledger lines as the column named
// amount (the sales lines, negated) and the partner's as commission_cents;
// its arguments are ledger.Sales and ledger.Commission.
func sumsOf(amount string) string {
	return `COALESCE(SUM(CASE WHEN l.account = ? THEN -l.amount_cents ELSE 0 END), 0) AS ` + amount + `,
		COALESCE(SUM(CASE WHEN l.account = ? THEN l.amount_cents ELSE 0 END), 0) AS commission_cents`
}
