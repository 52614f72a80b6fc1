package console

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/internal/payout"
	"github.com/domaind/domaind/models"
)

// opsPayoutsPageData is what the ops payouts page shows.
type opsPayoutsPageData struct {
	Title, Error, Done, Status, Next string
	Statuses                         []string
	Payouts                          []opsPayoutRow
}

// opsPayoutRow is a payout as a row of the page, its amounts and times
// written for people.
type opsPayoutRow struct {
	ID, PartnerID, Environment, Period, Amount, Status, Reference, PaidAt string
	Pending                                                               bool
}

// opsPayoutsPage answers GET /ops/payouts: the payouts, newest period
// first, filtered by status as GET /api/ops/payouts is, each pending one
// with a form to mark it paid.
func (con *Console) opsPayoutsPage(c *gin.Context) {
	con.renderOpsPayouts(c, http.StatusOK, "", con.notice(c))
}

func (con *Console) renderOpsPayouts(c *gin.Context, status int, problem, done string) {
	view := opsPayoutsPageData{Title: "Payouts", Error: problem, Done: done, Status: c.Query("status"), Statuses: payout.Statuses}
	limit, err := httpjson.PageLimit(c)
	var payouts []models.Payout
	var next string
	if err == nil {
		payouts, next, err = con.svc.Payouts.List(c.Request.Context(), payout.Filter{Status: view.Status, Limit: limit, Cursor: c.Query("cursor")})
	}
	if err != nil && problem == "" {
		status, view.Error = con.problem(c, err)
	}
	for _, p := range payouts {
		row := opsPayoutRow{ID: p.ID, PartnerID: p.PartnerID, Environment: p.Environment, Amount: page.Money(p.Currency, p.AmountCents),
			Status: p.Status, Reference: p.Reference, Pending: p.Status == models.PayoutPending,
			Period: p.PeriodStart.UTC().Format(page.Time) + " to " + p.PeriodEnd.UTC().Format(page.Time)}
		if p.PaidAt != nil {
			row.PaidAt = p.PaidAt.UTC().Format(page.Time)
		}
		view.Payouts = append(view.Payouts, row)
	}
	view.Next = page.Older(c.Request.URL.Query(), "/ops/payouts", next, "status")
	con.render(c, status, "ops_payouts.html", view)
}

// opsPayoutSubmit answers the page's mark-paid form as POST
// /api/ops/payouts/{id}/mark-paid does: back to the page (303) saying so,
// or the page with what went wrong.
func (con *Console) opsPayoutSubmit(c *gin.Context) {
	p, err := con.svc.Payouts.MarkPaid(c.Request.Context(), c.Param("id"), c.PostForm("reference"))
	if err != nil {
		status, problem := con.problem(c, err)
		con.renderOpsPayouts(c, status, problem, "")
		return
	}
	done := fmt.Sprintf("%s: paid %s to %s, reference %s", p.ID, page.Money(p.Currency, p.AmountCents), p.PartnerID, p.Reference)
	con.done(c, "/ops/payouts", done)
}

// payoutsCSV answers GET /ops/payouts.csv: every payout of the page's
// status filter (all of them, not a page), newest period first, for the
// books: amounts in cents and as written, times in RFC 3339.
func (con *Console) payoutsCSV(c *gin.Context) {
	ctx := c.Request.Context()
	f := payout.Filter{Status: c.Query("status"), Limit: pagecursor.MaxLimit}
	partners, err := con.svc.Partners.All(ctx)
	var payouts []models.Payout
	for more := err == nil; more; more = f.Cursor != "" {
		var p []models.Payout
		p, f.Cursor, err = con.svc.Payouts.List(ctx, f)
		payouts = append(payouts, p...)
		if err != nil {
			break
		}
	}
	if err != nil {
		status, problem := con.problem(c, err)
		con.render(c, status, "error.html", page.NewError(c.Request, status, problem))
		return
	}
	name := partnerNames(partners)
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="payouts.csv"`)
	w := csv.NewWriter(c.Writer)
	w.Write([]string{"payout_id", "partner_id", "partner", "environment", "period_start", "period_end", "currency",
		"amount_cents", "amount", "status", "reference", "paid_at"})
	for _, p := range payouts {
		paid := ""
		if p.PaidAt != nil {
			paid = p.PaidAt.UTC().Format(time.RFC3339)
		}
		w.Write([]string{p.ID, p.PartnerID, textCell(name(p.PartnerID)), p.Environment, p.PeriodStart.UTC().Format(time.RFC3339),
			p.PeriodEnd.UTC().Format(time.RFC3339), p.Currency, strconv.FormatInt(p.AmountCents, 10), page.Money(p.Currency, p.AmountCents),
			p.Status, textCell(p.Reference), paid})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		con.log.WarnContext(ctx, "payouts CSV cut short", "err", err)
	}
}

// textCell keeps a text a person typed (a partner's name, a reference)
// from being read as a formula by the spreadsheet finance opens the CSV
// in: one starting with = + - @ or a tab or carriage return gets a
// leading apostrophe, which spreadsheets show as text.
func textCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
