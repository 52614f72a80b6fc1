package api

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/payout"
	"github.com/domaind/domaind/internal/settlement"
	"github.com/domaind/domaind/models"
)

// runView is a settlement run as ops see it.
type runView struct {
	ID          string     `json:"id"`
	PeriodStart time.Time  `json:"period_start"`
	PeriodEnd   time.Time  `json:"period_end"`
	Status      string     `json:"status"`
	Trigger     string     `json:"trigger"`
	Error       *string    `json:"error"`
	StatusURL   string     `json:"status_url"`
	CreatedAt   time.Time  `json:"created_at"`
	StartedAt   *time.Time `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at"`
}

func newRunView(r models.SettlementRun) runView {
	v := runView{ID: r.ID, PeriodStart: r.PeriodStart.UTC(), PeriodEnd: r.PeriodEnd.UTC(), Status: r.Status, Trigger: r.Trigger,
		StatusURL: "/api/ops/settlements/runs/" + r.ID, CreatedAt: r.CreatedAt.UTC(), StartedAt: utc(r.StartedAt), FinishedAt: utc(r.FinishedAt)}
	if r.Error != "" {
		v.Error = &r.Error
	}
	return v
}

// requestRun answers POST /api/ops/settlements/runs {period_start}: 202
// with the period's run, queued now or as it already is.
func (s *Server) requestRun(c *gin.Context) error {
	var in struct {
		PeriodStart *string `json:"period_start"`
	}
	if err := httpjson.DecodeJSON(c, &in, false); err != nil {
		return err
	}
	if in.PeriodStart == nil {
		return fault.Invalid("period_start", "is required: the start of a closed settlement period, a date (2026-11-16) or a time in RFC 3339")
	}
	start, err := s.periodStart(*in.PeriodStart)
	if err != nil {
		return err
	}
	run, err := s.svc.Settlements.Request(c.Request.Context(), start, settlement.TriggerOps)
	if err != nil {
		return err
	}
	c.Header("Location", "/api/ops/settlements/runs/"+run.ID)
	c.JSON(http.StatusAccepted, newRunView(run))
	return nil
}

// periodStart reads a settlement period's start as ops type it: a date
// (2026-11-16, midnight UTC) or a time in RFC 3339.
func (s *Server) periodStart(in string) (time.Time, error) {
	in = strings.TrimSpace(in)
	if t, err := time.Parse(time.DateOnly, in); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, in); err == nil {
		return t, nil
	}
	closed := s.svc.Settlements.Closed().Start.UTC()
	return time.Time{}, fault.Invalid("period_start", "must be a date such as %s or a time in RFC 3339 such as %s",
		closed.Format(time.DateOnly), closed.Format(time.RFC3339))
}

// listRuns answers GET /api/ops/settlements/runs: the newest runs.
func (s *Server) listRuns(c *gin.Context) error {
	runs, err := s.svc.Settlements.Runs(c.Request.Context())
	if err != nil {
		return err
	}
	out := make([]runView, len(runs))
	for i, r := range runs {
		out[i] = newRunView(r)
	}
	c.JSON(http.StatusOK, gin.H{"runs": out})
	return nil
}

// getRun answers GET /api/ops/settlements/runs/{id}: the run, its period's
// statements (every partner's) and their totals by currency.
func (s *Server) getRun(c *gin.Context) error {
	run, statements, err := s.runStatements(c)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"run": newRunView(run), "statements": httpjson.NonNil(statements), "totals": settlement.Totals(statements)})
	return nil
}

// runCSV answers GET /api/ops/settlements/runs/{id}/statements.csv: the
// run's statements as CSV, one line each, amounts in cents, for finance's
// spreadsheets.
func (s *Server) runCSV(c *gin.Context) error {
	run, statements, err := s.runStatements(c)
	if err != nil {
		return err
	}
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", fmt.Sprintf(`attachment; filename="settlement-%s.csv"`, run.PeriodStart.Format(time.DateOnly)))
	w := csv.NewWriter(c.Writer)
	w.Write([]string{"period_start", "period_end", "partner_id", "environment", "currency", "orders",
		"gross_cents", "refunds_cents", "commission_cents", "amount_owed_cents", "referral_cents", "payout_cents"})
	for _, st := range statements {
		w.Write([]string{st.PeriodStart.Format(time.RFC3339), st.PeriodEnd.Format(time.RFC3339), st.PartnerID, st.Environment,
			st.Currency, strconv.Itoa(st.Orders), cents(st.GrossCents), cents(st.RefundsCents), cents(st.CommissionCents),
			cents(st.AmountOwedCents), cents(st.ReferralCents), cents(st.PayoutCents)})
	}
	w.Flush()
	return w.Error()
}

func cents(n int64) string { return strconv.FormatInt(n, 10) }

// runStatements reads the run of the path's id and every statement of its
// period.
func (s *Server) runStatements(c *gin.Context) (models.SettlementRun, []settlement.Statement, error) {
	ctx := c.Request.Context()
	run, err := s.svc.Settlements.Get(ctx, c.Param("id"))
	if err != nil {
		return run, nil, err
	}
	statements, err := s.svc.Settlements.PeriodStatements(ctx, run.PeriodStart)
	return run, statements, err
}

// listPayouts answers GET /api/ops/payouts: payouts, newest period first,
// filtered by status, partner_id and environment, with limit and cursor.
func (s *Server) listPayouts(c *gin.Context) error {
	limit, err := httpjson.PageLimit(c)
	if err != nil {
		return err
	}
	payouts, next, err := s.svc.Payouts.List(c.Request.Context(), payout.Filter{PartnerID: c.Query("partner_id"),
		Environment: c.Query("environment"), Status: c.Query("status"), Limit: limit, Cursor: c.Query("cursor")})
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"payouts": payout.Views(payouts), "next_cursor": httpjson.Nullable(next)})
	return nil
}

// markPayoutPaid answers POST /api/ops/payouts/{id}/mark-paid {reference}:
// finance has paid the payout; its ledger lines are written.
func (s *Server) markPayoutPaid(c *gin.Context) error {
	var in struct {
		Reference string `json:"reference"`
	}
	if err := httpjson.DecodeJSON(c, &in, false); err != nil {
		return err
	}
	p, err := s.svc.Payouts.MarkPaid(c.Request.Context(), c.Param("id"), in.Reference)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, payout.NewView(p))
	return nil
}

// opsRunRow is a settlement run as a row of the ops pages, its times in
// UTC ("" for a step not reached).
type opsRunRow struct {
	ID, Status, Trigger, Error                         string
	PeriodStart, PeriodEnd, Created, Started, Finished string
}

// newOpsRunRow is run as a row of the ops pages.
func newOpsRunRow(r models.SettlementRun) opsRunRow {
	at := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(pageTime)
	}
	return opsRunRow{ID: r.ID, Status: r.Status, Trigger: r.Trigger, Error: r.Error, PeriodStart: at(&r.PeriodStart),
		PeriodEnd: at(&r.PeriodEnd), Created: at(&r.CreatedAt), Started: at(r.StartedAt), Finished: at(r.FinishedAt)}
}

// opsSettlementsPageData is what the ops settlements page shows.
type opsSettlementsPageData struct {
	Title, Error, Done string
	// PeriodStart is the Run now form's period start, the period closed
	// last unless the form came back refused.
	PeriodStart string
	Runs        []opsRunRow
}

// opsSettlementsPage answers GET /ops/settlements: the newest runs, as GET
// /api/ops/settlements/runs lists them, and a form to run a closed period
// now.
func (s *Server) opsSettlementsPage(c *gin.Context) {
	s.renderOpsSettlements(c, http.StatusOK, s.svc.Settlements.Closed().Start.Format(time.RFC3339), "", c.Query("done"))
}

// renderOpsSettlements shows the runs with status, the form's period
// start, and a problem or a notice.
func (s *Server) renderOpsSettlements(c *gin.Context, status int, start, problem, done string) {
	page := opsSettlementsPageData{Title: "Settlement runs", Error: problem, Done: done, PeriodStart: start}
	runs, err := s.svc.Settlements.Runs(c.Request.Context())
	if err != nil && page.Error == "" {
		status, page.Error = s.formError(c, err)
	}
	for _, r := range runs {
		page.Runs = append(page.Runs, newOpsRunRow(r))
	}
	s.render(c, status, "ops_settlements.html", page)
}

// opsSettlementSubmit answers the page's Run now form as POST
// /api/ops/settlements/runs does: back to the page (303) naming the run,
// queued now or as it already is, or the page with what went wrong.
func (s *Server) opsSettlementSubmit(c *gin.Context) {
	in := c.PostForm("period_start")
	start, err := s.periodStart(in)
	var run models.SettlementRun
	if err == nil {
		run, err = s.svc.Settlements.Request(c.Request.Context(), start, settlement.TriggerOps)
	}
	if err != nil {
		status, problem := s.formError(c, err)
		s.renderOpsSettlements(c, status, in, problem, "")
		return
	}
	done := fmt.Sprintf("The run of %s: %s", run.PeriodStart.UTC().Format(pageTime), run.Status)
	c.Redirect(http.StatusSeeOther, "/ops/settlements?"+url.Values{"done": {done}}.Encode())
}

// opsSettlementPageData is what a run's ops page shows.
type opsSettlementPageData struct {
	Title, Error string
	Run          opsRunRow
	Statements   []opsStatementRow
	Totals       []opsTotalRow
}

// opsTotalRow is a statement's amounts, or a currency's total, as money.
type opsTotalRow struct {
	Currency                                                 string
	Orders                                                   int
	Gross, Refunds, Commission, AmountOwed, Referral, Payout string
}

// newOpsTotalRow is t's amounts as money.
func newOpsTotalRow(t settlement.Total) opsTotalRow {
	return opsTotalRow{Currency: t.Currency, Orders: t.Orders, Gross: money(t.Currency, t.GrossCents),
		Refunds: money(t.Currency, t.RefundsCents), Commission: money(t.Currency, t.CommissionCents),
		AmountOwed: money(t.Currency, t.AmountOwedCents), Referral: money(t.Currency, t.ReferralCents), Payout: money(t.Currency, t.PayoutCents)}
}

// opsStatementRow is a statement as a row of a run's page.
type opsStatementRow struct {
	Partner, Environment string
	opsTotalRow
}

// opsSettlementPage answers GET /ops/settlements/{id}: the run, its
// period's statements and their totals by currency, as GET
// /api/ops/settlements/runs/{id} has them, and a link to their CSV.
func (s *Server) opsSettlementPage(c *gin.Context) {
	page := opsSettlementPageData{Title: "Settlement run"}
	run, statements, err := s.runStatements(c)
	var partners []models.Partner
	if err == nil {
		partners, err = s.svc.Partners.All(c.Request.Context())
	}
	if err != nil {
		var status int
		status, page.Error = s.formError(c, err)
		s.render(c, status, "ops_settlement.html", page)
		return
	}
	name := partnerNames(partners)
	page.Run = newOpsRunRow(run)
	for _, st := range statements {
		page.Statements = append(page.Statements, opsStatementRow{Partner: name(st.PartnerID),
			Environment: st.Environment, opsTotalRow: newOpsTotalRow(st.Total)})
	}
	for _, t := range settlement.Totals(statements) {
		page.Totals = append(page.Totals, newOpsTotalRow(t))
	}
	s.render(c, http.StatusOK, "ops_settlement.html", page)
}
