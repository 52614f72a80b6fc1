package settlement

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/internal/period"
	"github.com/domaind/domaind/models"
)

// Statement is one partner's settled orders of one period, environment
// and currency, summed from their ledger lines (Total).
type Statement struct {
	PeriodStart time.Time `json:"period_start"`
	PeriodEnd   time.Time `json:"period_end"`
	PartnerID   string    `json:"partner_id"`
	Environment string    `json:"environment"`
	Total
	// Status is final: a statement's orders are settled, and settled
	// orders do not change.
	Status string `json:"status"`
}

// StatementFilter picks statements; empty fields pick all.
type StatementFilter struct {
	PartnerID, Environment string
	PeriodStart            *time.Time
	// Limit is the page's size (1 to pagecursor.MaxLimit); Cursor the page's
	// start, the next_cursor of the page before.
	Limit  int
	Cursor string
}

// Statements returns a page of the statements f picks, newest period
// first (then by partner, environment and currency), and the cursor of
// the next page ("" after the last), read from the replica when there is
// one.
func (s *Service) Statements(ctx context.Context, f StatementFilter) ([]Statement, string, error) {
	var err error
	if f.Limit, err = pagecursor.Limit(f.Limit, pagecursor.DefaultLimit, pagecursor.MaxLimit); err != nil {
		return nil, "", err
	}
	q := models.FromReplica(s.db.WithContext(ctx)).Table("orders o")
	if f.PartnerID != "" {
		q = q.Where("l.partner_id = ?", f.PartnerID)
	}
	if f.Environment != "" {
		q = q.Where("l.environment = ?", f.Environment)
	}
	if f.PeriodStart != nil {
		q = q.Where("o.settled_period = ?", f.PeriodStart.UTC())
	}
	fingerprint := pagecursor.Fingerprint("statements/v1", f.PartnerID, f.Environment, pagecursor.TimeKey(f.PeriodStart))
	if f.Cursor != "" {
		c, err := pagecursor.Decode(s.secretKey, f.Cursor, fingerprint)
		if err != nil {
			return nil, "", err
		}
		// The key is the last statement's period; its ID the rest of its
		// sort key, partner, environment and currency. The two run in
		// opposite directions, so no row comparison says it; the first
		// condition bounds the index of the periods.
		at := c.At()
		q = q.Where("o.settled_period <= ? AND (o.settled_period < ? OR l.partner_id || ' ' || l.environment || ' ' || l.currency > ?)", at, at, c.ID)
	}
	out, err := sumStatements(q.Limit(f.Limit + 1))
	if err != nil {
		return nil, "", err
	}
	out, next := pagecursor.Trim(s.secretKey, fingerprint, out, f.Limit, func(st Statement) (int64, string) {
		return st.PeriodStart.UnixNano(), st.PartnerID + " " + st.Environment + " " + st.Currency
	})
	return out, next, nil
}

// PeriodStatements returns every statement of the period starting at
// start, summed in one query (paging Statements would sum the period
// again for each page).
func (s *Service) PeriodStatements(ctx context.Context, start time.Time) ([]Statement, error) {
	return sumStatements(s.db.WithContext(ctx).Table("orders o").Where("o.settled_period = ?", start.UTC()))
}

// Periods is how many periods History goes back: a quarter of weekly
// periods, the finance page's chart.
const Periods = 12

// PeriodSummary is a period as finance look back on it: its run (nil
// when none was asked for) and its statements' totals by currency.
type PeriodSummary struct {
	period.Period
	Run    *models.SettlementRun
	Totals []Total
}

// History returns the Periods closed last, newest first, with their runs
// and totals (one query for the totals of all of them).
func (s *Service) History(ctx context.Context) ([]PeriodSummary, error) {
	out := make([]PeriodSummary, Periods)
	starts := make([]time.Time, Periods)
	for i, p := 0, s.Closed(); i < Periods; i, p = i+1, s.length.Of(p.Start.Add(-time.Nanosecond)) {
		out[i].Period, starts[i] = p, p.Start
	}
	var runs []models.SettlementRun
	if err := s.db.WithContext(ctx).Where("period_start IN ?", starts).Find(&runs).Error; err != nil {
		return nil, fmt.Errorf("find the runs of the last %d periods: %w", Periods, err)
	}
	statements, err := sumStatements(models.FromReplica(s.db.WithContext(ctx)).Table("orders o").Where("o.settled_period IN ?", starts))
	if err != nil {
		return nil, err
	}
	for i := range out {
		start := out[i].Start
		for j := range runs {
			if runs[j].PeriodStart.Equal(start) {
				out[i].Run = &runs[j]
			}
		}
		out[i].Totals = Totals(slices.DeleteFunc(slices.Clone(statements), func(st Statement) bool { return !st.PeriodStart.Equal(start) }))
	}
	return out, nil
}

// RunStatements returns the run id and every statement of its period.
func (s *Service) RunStatements(ctx context.Context, id string) (models.SettlementRun, []Statement, error) {
	run, err := s.Get(ctx, id)
	if err != nil {
		return run, nil, err
	}
	statements, err := s.PeriodStatements(ctx, run.PeriodStart)
	return run, statements, err
}

// sumStatements sums the statements of the settled orders o that q picks,
// in the statements' order. A statement is of the partner whose ledger
// lines they are: the seller's sale, refund and commission lines, and the
// referral commission the orders it referred made payable to it.
func sumStatements(q *gorm.DB) ([]Statement, error) {
	var rows []struct {
		PeriodStart, PeriodEnd                                    time.Time
		PartnerID, Environment, Currency                          string
		Orders                                                    int
		Gross, Refunds, Commission, Receivable, Payable, Referral int64
	}
	err := q.Joins("JOIN settlement_runs r ON r.period_start = o.settled_period").
		Joins("JOIN ledger_entries l ON l.order_id = o.public_id").
		Select(`r.period_start, r.period_end, l.partner_id, l.environment, l.currency,
		COUNT(DISTINCT CASE WHEN l.kind = ? THEN o.public_id END) AS orders,
		COALESCE(SUM(CASE WHEN l.account = ? AND l.kind = ? THEN -l.amount_cents ELSE 0 END), 0) AS gross,
		COALESCE(SUM(CASE WHEN l.account = ? AND l.kind = ? THEN -l.amount_cents ELSE 0 END), 0) AS refunds,
		COALESCE(SUM(CASE WHEN l.account = ? THEN l.amount_cents ELSE 0 END), 0) AS commission,
		COALESCE(SUM(CASE WHEN l.account = ? THEN l.amount_cents ELSE 0 END), 0) AS receivable,
		COALESCE(SUM(CASE WHEN l.account = ? THEN -l.amount_cents ELSE 0 END), 0) AS payable,
		COALESCE(SUM(CASE WHEN l.account = ? AND l.kind = ? THEN -l.amount_cents ELSE 0 END), 0) AS referral`,
			ledger.KindSale, ledger.Sales, ledger.KindSale, ledger.Sales, ledger.KindRefund, ledger.Commission, ledger.Receivable,
			ledger.Payable, ledger.Payable, ledger.KindReferral).
		Group("r.period_start, r.period_end, l.partner_id, l.environment, l.currency").
		Order("r.period_start DESC, l.partner_id, l.environment, l.currency").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("sum statements: %w", err)
	}
	out := make([]Statement, len(rows))
	for i, r := range rows {
		out[i] = Statement{PeriodStart: r.PeriodStart.UTC(), PeriodEnd: r.PeriodEnd.UTC(), PartnerID: r.PartnerID, Environment: r.Environment,
			Total: Total{Currency: r.Currency, Orders: r.Orders, GrossCents: r.Gross, RefundsCents: r.Refunds,
				CommissionCents: r.Commission, AmountOwedCents: r.Receivable, ReferralCents: r.Referral, PayoutCents: r.Payable},
			Status: "final"}
	}
	return out, nil
}

// Total is the orders of a statement, or of statements of one currency
// added up, and their amounts in cents: GrossCents the sales, RefundsCents
// the refunds before delivery (zero or negative), CommissionCents the
// partners' share after refunds, AmountOwedCents what partners owe for the
// sales they collected, ReferralCents the commission of the sales they
// referred, and PayoutCents what the service owes partners for the sales
// it collected on the hosted checkout and those they referred.
type Total struct {
	Currency        string `json:"currency"`
	Orders          int    `json:"orders"`
	GrossCents      int64  `json:"gross_cents"`
	RefundsCents    int64  `json:"refunds_cents"`
	CommissionCents int64  `json:"commission_cents"`
	AmountOwedCents int64  `json:"amount_owed_cents"`
	ReferralCents   int64  `json:"referral_cents"`
	PayoutCents     int64  `json:"payout_cents"`
}

// add adds u's orders and amounts to t's.
func (t *Total) add(u Total) {
	t.Orders += u.Orders
	t.GrossCents += u.GrossCents
	t.RefundsCents += u.RefundsCents
	t.CommissionCents += u.CommissionCents
	t.AmountOwedCents += u.AmountOwedCents
	t.ReferralCents += u.ReferralCents
	t.PayoutCents += u.PayoutCents
}

// Totals adds statements up by currency, in the order of the currencies.
func Totals(statements []Statement) []Total {
	at := map[string]int{}
	out := []Total{}
	for _, st := range statements {
		i, ok := at[st.Currency]
		if !ok {
			i, at[st.Currency] = len(out), len(out)
			out = append(out, Total{Currency: st.Currency})
		}
		out[i].add(st.Total)
	}
	slices.SortFunc(out, func(a, b Total) int { return strings.Compare(a.Currency, b.Currency) })
	return out
}
