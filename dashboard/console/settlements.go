package console

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/settlement"
	"github.com/domaind/domaind/models"
)

// PeriodStart reads a settlement period's start as ops type it: a date
// (2026-11-16, midnight UTC) or a time in RFC 3339; the refusal's
// examples are the start of the period closed last, closed.
func PeriodStart(in string, closed time.Time) (time.Time, error) {
	in = strings.TrimSpace(in)
	if t, err := time.Parse(time.DateOnly, in); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, in); err == nil {
		return t, nil
	}
	closed = closed.UTC()
	return time.Time{}, fault.Invalid("period_start", "must be a date such as %s or a time in RFC 3339 such as %s",
		closed.Format(time.DateOnly), closed.Format(time.RFC3339))
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
		return t.UTC().Format(page.Time)
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
func (con *Console) opsSettlementsPage(c *gin.Context) {
	con.renderOpsSettlements(c, http.StatusOK, con.svc.Settlements.Closed().Start.Format(time.RFC3339), "", con.notice(c))
}

// renderOpsSettlements shows the runs with status, the form's period
// start, and a problem or a notice.
func (con *Console) renderOpsSettlements(c *gin.Context, status int, start, problem, done string) {
	view := opsSettlementsPageData{Title: "Settlement runs", Error: problem, Done: done, PeriodStart: start}
	runs, err := con.svc.Settlements.Runs(c.Request.Context())
	if err != nil && view.Error == "" {
		status, view.Error = con.problem(c, err)
	}
	for _, r := range runs {
		view.Runs = append(view.Runs, newOpsRunRow(r))
	}
	con.render(c, status, "ops_settlements.html", view)
}

// opsSettlementSubmit answers the page's Run now form as POST
// /api/ops/settlements/runs does: back to the page (303) naming the run,
// queued now or as it already is, or the page with what went wrong.
func (con *Console) opsSettlementSubmit(c *gin.Context) {
	in := c.PostForm("period_start")
	start, err := PeriodStart(in, con.svc.Settlements.Closed().Start)
	var run models.SettlementRun
	if err == nil {
		run, err = con.svc.Settlements.Request(c.Request.Context(), start, settlement.TriggerOps)
	}
	if err != nil {
		status, problem := con.problem(c, err)
		con.renderOpsSettlements(c, status, in, problem, "")
		return
	}
	done := fmt.Sprintf("The run of %s: %s", run.PeriodStart.UTC().Format(page.Time), run.Status)
	con.done(c, "/ops/settlements", done)
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
	return opsTotalRow{Currency: t.Currency, Orders: t.Orders, Gross: page.Money(t.Currency, t.GrossCents),
		Refunds: page.Money(t.Currency, t.RefundsCents), Commission: page.Money(t.Currency, t.CommissionCents),
		AmountOwed: page.Money(t.Currency, t.AmountOwedCents), Referral: page.Money(t.Currency, t.ReferralCents), Payout: page.Money(t.Currency, t.PayoutCents)}
}

// opsStatementRow is a statement as a row of a run's page.
type opsStatementRow struct {
	Partner, Environment string
	opsTotalRow
}

// opsSettlementPage answers GET /ops/settlements/{id}: the run, its
// period's statements and their totals by currency, as GET
// /api/ops/settlements/runs/{id} has them, and a link to their CSV.
func (con *Console) opsSettlementPage(c *gin.Context) {
	view := opsSettlementPageData{Title: "Settlement run"}
	run, statements, err := con.svc.Settlements.RunStatements(c.Request.Context(), c.Param("id"))
	var partners []models.Partner
	if err == nil {
		partners, err = con.svc.Partners.All(c.Request.Context())
	}
	if err != nil {
		var status int
		status, view.Error = con.problem(c, err)
		con.render(c, status, "ops_settlement.html", view)
		return
	}
	name := partnerNames(partners)
	view.Run = newOpsRunRow(run)
	for _, st := range statements {
		view.Statements = append(view.Statements, opsStatementRow{Partner: name(st.PartnerID),
			Environment: st.Environment, opsTotalRow: newOpsTotalRow(st.Total)})
	}
	for _, t := range settlement.Totals(statements) {
		view.Totals = append(view.Totals, newOpsTotalRow(t))
	}
	con.render(c, http.StatusOK, "ops_settlement.html", view)
}
