package console

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/payout"
	"github.com/domaind/domaind/models"
)

// opsPayoutsPageData is what the ops payouts view shows.
type opsPayoutsPageData struct {
	Title, Error, Done, Status, Next string
	Statuses                         []string
	Payouts                          []opsPayoutRow
}

// opsPayoutRow is a payout as a row of the view, its amounts and times
// written for people.
type opsPayoutRow struct {
	ID, PartnerID, Environment, Period, Amount, Status, Reference, PaidAt string
	Pending                                                               bool
}

// opsPayoutsPage answers GET /ops/payouts: the payouts, newest period
// first, filtered by status as GET /api/ops/payouts is, each pending one
// with a form to mark it paid.
func (con *Console) opsPayoutsPage(c *gin.Context) {
	con.renderOpsPayouts(c, http.StatusOK, "", c.Query("done"))
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

// opsPayoutSubmit answers the view's mark-paid form as POST
// /api/ops/payouts/{id}/mark-paid does: back to the view (303) saying so,
// or the view with what went wrong.
func (con *Console) opsPayoutSubmit(c *gin.Context) {
	p, err := con.svc.Payouts.MarkPaid(c.Request.Context(), c.Param("id"), c.PostForm("reference"))
	if err != nil {
		status, problem := con.problem(c, err)
		con.renderOpsPayouts(c, status, problem, "")
		return
	}
	done := fmt.Sprintf("%s: paid %s to %s, reference %s", p.ID, page.Money(p.Currency, p.AmountCents), p.PartnerID, p.Reference)
	c.Redirect(http.StatusSeeOther, "/ops/payouts?"+url.Values{"done": {done}}.Encode())
}
