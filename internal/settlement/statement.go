package settlement

import (
	"context"
	"fmt"
	"time"

	"github.com/domaind/domaind/internal/ledger"
)

// Statement is one partner's settled orders of one period, environment
// and currency, summed from their ledger lines. Amounts are cents:
// GrossCents the sales, RefundsCents the refunds before delivery (zero or
// negative), CommissionCents the partner's share after refunds,
// AmountOwedCents what the partner owes for the sales it collected, and
// PayoutCents what the service owes the partner for the sales it
// collected on the hosted checkout.
type Statement struct {
	PeriodStart     time.Time `json:"period_start"`
	PeriodEnd       time.Time `json:"period_end"`
	PartnerID       string    `json:"partner_id"`
	Environment     string    `json:"environment"`
	Currency        string    `json:"currency"`
	Orders          int       `json:"orders"`
	GrossCents      int64     `json:"gross_cents"`
	RefundsCents    int64     `json:"refunds_cents"`
	CommissionCents int64     `json:"commission_cents"`
	AmountOwedCents int64     `json:"amount_owed_cents"`
	PayoutCents     int64     `json:"payout_cents"`
	// Status is final: a statement's orders are settled, and settled
	// orders do not change.
	Status string `json:"status"`
}

// StatementFilter picks statements; empty fields pick all.
type StatementFilter struct {
	PartnerID, Environment string
	PeriodStart            *time.Time
	// Before pages: statements of periods before it.
	Before *time.Time
	Limit  int
}

// Statements returns up to f.Limit statements f picks, newest period
// first, and whether there are more. A page ends with whole periods of a
// partner only when its currencies fit: page with Before set to the last
// statement's period.
func (s *Service) Statements(ctx context.Context, f StatementFilter) ([]Statement, bool, error) {
	q := s.db.WithContext(ctx).Table("orders o").
		Joins("JOIN settlement_runs r ON r.period_start = o.settled_period").
		Joins("JOIN ledger_entries l ON l.order_id = o.public_id")
	if f.PartnerID != "" {
		q = q.Where("o.partner_id = ?", f.PartnerID)
	}
	if f.Environment != "" {
		q = q.Where("o.environment = ?", f.Environment)
	}
	if f.PeriodStart != nil {
		q = q.Where("o.settled_period = ?", f.PeriodStart.UTC())
	}
	if f.Before != nil {
		q = q.Where("o.settled_period < ?", f.Before.UTC())
	}
	var rows []struct {
		PeriodStart, PeriodEnd                          time.Time
		PartnerID, Environment, Currency                string
		Orders                                          int
		Gross, Refunds, Commission, Receivable, Payable int64
	}
	err := q.Select(`r.period_start, r.period_end, o.partner_id, o.environment, l.currency,
		COUNT(DISTINCT o.public_id) AS orders,
		COALESCE(SUM(CASE WHEN l.account = ? AND l.kind = ? THEN -l.amount_cents ELSE 0 END), 0) AS gross,
		COALESCE(SUM(CASE WHEN l.account = ? AND l.kind = ? THEN -l.amount_cents ELSE 0 END), 0) AS refunds,
		COALESCE(SUM(CASE WHEN l.account = ? THEN l.amount_cents ELSE 0 END), 0) AS commission,
		COALESCE(SUM(CASE WHEN l.account = ? THEN l.amount_cents ELSE 0 END), 0) AS receivable,
		COALESCE(SUM(CASE WHEN l.account = ? THEN -l.amount_cents ELSE 0 END), 0) AS payable`,
		ledger.Sales, ledger.KindSale, ledger.Sales, ledger.KindRefund, ledger.Commission, ledger.Receivable, ledger.Payable).
		Group("r.period_start, r.period_end, o.partner_id, o.environment, l.currency").
		Order("r.period_start DESC, o.partner_id, o.environment, l.currency").
		Limit(f.Limit + 1).Scan(&rows).Error
	if err != nil {
		return nil, false, fmt.Errorf("sum statements: %w", err)
	}
	more := len(rows) > f.Limit
	if more {
		rows = rows[:f.Limit]
	}
	out := make([]Statement, len(rows))
	for i, r := range rows {
		out[i] = Statement{PeriodStart: r.PeriodStart.UTC(), PeriodEnd: r.PeriodEnd.UTC(), PartnerID: r.PartnerID, Environment: r.Environment,
			Currency: r.Currency, Orders: r.Orders, GrossCents: r.Gross, RefundsCents: r.Refunds,
			CommissionCents: r.Commission, AmountOwedCents: r.Receivable, PayoutCents: r.Payable, Status: "final"}
	}
	return out, more, nil
}

// Totals sums statements (of one currency each) by currency.
func Totals(statements []Statement) map[string]Statement {
	by := map[string]Statement{}
	for _, st := range statements {
		t := by[st.Currency]
		t.Currency = st.Currency
		t.Orders += st.Orders
		t.GrossCents += st.GrossCents
		t.RefundsCents += st.RefundsCents
		t.CommissionCents += st.CommissionCents
		t.AmountOwedCents += st.AmountOwedCents
		t.PayoutCents += st.PayoutCents
		by[st.Currency] = t
	}
	return by
}
