package api

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
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
func (s *Server) opsPayoutsPage(c *gin.Context) {
	s.renderOpsPayouts(c, http.StatusOK, "", c.Query("done"))
}

func (s *Server) renderOpsPayouts(c *gin.Context, status int, problem, done string) {
	page := opsPayoutsPageData{Title: "Payouts", Error: problem, Done: done, Status: c.Query("status"), Statuses: payout.Statuses}
	limit, err := httpjson.PageLimit(c)
	var payouts []models.Payout
	var next string
	if err == nil {
		payouts, next, err = s.svc.Payouts.List(c.Request.Context(), payout.Filter{Status: page.Status, Limit: limit, Cursor: c.Query("cursor")})
	}
	if err != nil && problem == "" {
		status, page.Error = s.formError(c, err)
	}
	for _, p := range payouts {
		row := opsPayoutRow{ID: p.ID, PartnerID: p.PartnerID, Environment: p.Environment, Amount: money(p.Currency, p.AmountCents),
			Status: p.Status, Reference: p.Reference, Pending: p.Status == models.PayoutPending,
			Period: p.PeriodStart.UTC().Format(pageTime) + " to " + p.PeriodEnd.UTC().Format(pageTime)}
		if p.PaidAt != nil {
			row.PaidAt = p.PaidAt.UTC().Format(pageTime)
		}
		page.Payouts = append(page.Payouts, row)
	}
	page.Next = olderPage(c, "/ops/payouts", next, "status")
	s.render(c, status, "ops_payouts.html", page)
}

// opsPayoutSubmit answers the page's mark-paid form as POST
// /api/ops/payouts/{id}/mark-paid does: back to the page (303) saying so,
// or the page with what went wrong.
func (s *Server) opsPayoutSubmit(c *gin.Context) {
	p, err := s.svc.Payouts.MarkPaid(c.Request.Context(), c.Param("id"), c.PostForm("reference"))
	if err != nil {
		status, problem := s.formError(c, err)
		s.renderOpsPayouts(c, status, problem, "")
		return
	}
	done := fmt.Sprintf("%s: paid %s to %s, reference %s", p.ID, money(p.Currency, p.AmountCents), p.PartnerID, p.Reference)
	c.Redirect(http.StatusSeeOther, "/ops/payouts?"+url.Values{"done": {done}}.Encode())
}
