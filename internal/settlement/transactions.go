package settlement

import (
	"context"
	"fmt"
	"slices"
	"strings"
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

// transactionPages pages the transactions, one a ledger transaction.
var transactionPages = pagecursor.Newest[Transaction]{Name: "transactions/v1", KeyCol: "l.created_at", IDCol: "l.txn_id",
	Key: func(t Transaction) (time.Time, string) { return t.CreatedAt, t.ID }}

// Transactions returns a page of the transactions f picks, newest first,
// the cursor of the next page ("" after the last), and the totals of all
// of them.
func (s *Service) Transactions(ctx context.Context, f TransactionFilter) ([]Transaction, string, []TransactionTotals, error) {
	if f.PaymentModel != "" && !slices.Contains([]string{models.PaymentPartnerCollected, models.PaymentHosted}, f.PaymentModel) {
		return nil, "", nil, fault.Invalid("payment_model", "must be partner_collected or hosted")
	}
	db := s.db.WithContext(ctx)
	page := s.lines(db, f, true).Where("l.account = ?", ledger.Sales) // one a transaction
	if f.From != nil {
		page = page.Where("l.created_at >= ?", f.From.UTC())
	}
	if f.To != nil {
		page = page.Where("l.created_at < ?", f.To.UTC())
	}
	page = page.Select(`l.txn_id AS id, l.kind, l.order_id, o.domain, o.status AS order_status, o.payment_model, l.currency,
		l.created_at, -l.amount_cents AS amount_cents,
		COALESCE((SELECT SUM(c.amount_cents) FROM ledger_entries c WHERE c.txn_id = l.txn_id AND c.account = ?), 0) AS commission_cents`,
		ledger.Commission)
	rows, next, err := transactionPages.Page(page, s.secretKey, f.Cursor, f.Limit,
		f.PartnerID, f.Environment, pagecursor.TimeKey(f.From), pagecursor.TimeKey(f.To), f.OrderStatus, f.PaymentModel)
	if err != nil {
		return nil, "", nil, err
	}
	for i := range rows {
		rows[i].CreatedAt = rows[i].CreatedAt.UTC()
	}
	totals, err := s.transactionTotals(db, f)
	if err != nil {
		return nil, "", nil, fmt.Errorf("total transactions: %w", err)
	}
	return rows, next, totals, nil
}

// lines picks the ledger lines l of f's sales and refunds by every filter
// but time, joined with their orders o when withOrders or a filter is on
// the orders (totals read no order otherwise).
func (s *Service) lines(db *gorm.DB, f TransactionFilter, withOrders bool) *gorm.DB {
	q := db.Table("ledger_entries l").
		Where("l.partner_id = ? AND l.environment = ? AND l.kind IN ?", f.PartnerID, f.Environment, []string{ledger.KindSale, ledger.KindRefund})
	if withOrders || f.OrderStatus != "" || f.PaymentModel != "" {
		q = q.Joins("JOIN orders o ON o.public_id = l.order_id")
	}
	if f.OrderStatus != "" {
		q = q.Where("o.status = ?", f.OrderStatus)
	}
	if f.PaymentModel != "" {
		q = q.Where("o.payment_model = ?", f.PaymentModel)
	}
	return q
}

// transactionTotals adds up every transaction f picks. The whole days of
// [From, To) that are rolled up (RollUp) are read from their LedgerDay
// rows, a row a day, and only the rest from the lines: the part days at
// the ends and the days since the last roll-up. A filter on the orders'
// status reads every line, as a roll-up cannot know the status its orders
// have now.
func (s *Service) transactionTotals(db *gorm.DB, f TransactionFilter) ([]TransactionTotals, error) {
	var lo, hi time.Time // the days read from roll-ups
	if f.OrderStatus == "" {
		var err error
		if hi, err = s.watermark(db); err != nil {
			return nil, err
		}
		if f.From != nil {
			lo = f.From.UTC().Truncate(oneDay)
			if lo.Before(f.From.UTC()) {
				lo = lo.Add(oneDay)
			}
		}
		if f.To != nil && f.To.UTC().Truncate(oneDay).Before(hi) {
			hi = f.To.UTC().Truncate(oneDay)
		}
	}
	// The spans read from the lines, each an index range of its own.
	type span struct{ from, to *time.Time }
	spans := []span{{f.From, f.To}}
	var rolled []TransactionTotals
	if lo.Before(hi) {
		spans = []span{{f.From, &lo}, {&hi, f.To}}
		if f.From == nil {
			spans = spans[1:] // the roll-ups start at the ledger's first day
		}
		q := db.Model(&models.LedgerDay{}).Where("partner_id = ? AND environment = ? AND day >= ? AND day < ?", f.PartnerID, f.Environment, lo, hi)
		if f.PaymentModel != "" {
			q = q.Where("payment_model = ?", f.PaymentModel)
		}
		err := q.Select("currency, SUM(gmv_cents) AS gmv_cents, SUM(commission_cents) AS commission_cents, SUM(count) AS count").
			Group("currency").Scan(&rolled).Error
		if err != nil {
			return nil, err
		}
	}
	var read []TransactionTotals
	for _, sp := range spans {
		q := s.lines(db, f, false)
		if sp.from != nil {
			q = q.Where("l.created_at >= ?", sp.from.UTC())
		}
		if sp.to != nil {
			q = q.Where("l.created_at < ?", sp.to.UTC())
		}
		var part []TransactionTotals
		err := q.Select("l.currency, "+totalsSQL, totalsArgs...).
			Group("l.currency").Scan(&part).Error
		if err != nil {
			return nil, err
		}
		read = append(read, part...)
	}
	return addTotals(rolled, read), nil
}

// addTotals adds two lists of totals up by currency, in currency order.
func addTotals(a, b []TransactionTotals) []TransactionTotals {
	out := []TransactionTotals{}
	for _, t := range slices.Concat(a, b) {
		i := slices.IndexFunc(out, func(u TransactionTotals) bool { return u.Currency == t.Currency })
		if i < 0 {
			out = append(out, TransactionTotals{Currency: t.Currency})
			i = len(out) - 1
		}
		out[i].GMVCents += t.GMVCents
		out[i].CommissionCents += t.CommissionCents
		out[i].Count += t.Count
	}
	slices.SortFunc(out, func(x, y TransactionTotals) int { return strings.Compare(x.Currency, y.Currency) })
	return out
}
