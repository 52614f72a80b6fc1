package console

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/brokerage"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/idempotency"
)

// opsCasesPageData is what the ops brokerage page shows.
type opsCasesPageData struct {
	Title, Error, Done string
	// Once is the token of the move forms: an offer sent twice is
	// recorded once.
	Once     string
	Status   string
	Statuses []string
	Cases    []opsCaseRow
	// Next is the link to the next page ("" on the last).
	Next string
}

// opsCaseRow is a case as a row of the page.
type opsCaseRow struct {
	brokerage.View
	Partner, Budget, Outcome, CreatedAt string
	Actions                             []brokerage.Action
}

// opsCasesPage answers GET /ops/brokerage: a page of cases, newest first,
// optionally of one status, with a form for each move their status
// allows.
func (con *Console) opsCasesPage(c *gin.Context) {
	con.renderOpsCases(c, http.StatusOK, "", con.notice(c))
}

// renderOpsCases shows the page of the query's filter with status and a
// problem or a notice.
func (con *Console) renderOpsCases(c *gin.Context, status int, problem, done string) {
	ctx := c.Request.Context()
	view := opsCasesPageData{Title: "Brokerage cases", Error: problem, Done: done, Once: idempotency.FormToken(),
		Statuses: brokerage.Statuses, Status: c.Query("status")}
	fail := func(err error) {
		if view.Error == "" {
			status, view.Error = con.problem(c, err)
		}
	}
	partners, err := con.svc.Partners.All(ctx)
	if err != nil {
		fail(err)
	}
	name := partnerNames(partners)
	cases, next, err := con.svc.Brokerage.List(ctx, brokerage.Filter{Status: view.Status, Cursor: c.Query("cursor")})
	if err != nil {
		fail(err)
	}
	for _, v := range cases {
		row := opsCaseRow{View: v, Actions: brokerage.Actions(v.Status), Partner: name(v.PartnerID),
			Budget: page.Money(v.Currency, v.BudgetCents), CreatedAt: v.CreatedAt.Format(page.Time)}
		if d := v.Deal; d != nil {
			row.Outcome = fmt.Sprintf("%s, fee %s, commission %s", page.Money(v.Currency, d.PriceCents),
				page.Money(v.Currency, d.FeeCents), page.Money(v.Currency, d.CommissionCents))
		}
		view.Cases = append(view.Cases, row)
	}
	view.Next = page.Older(c.Request.URL.Query(), "/ops/brokerage", next, "status")
	con.render(c, status, "ops_brokerage.html", view)
}

// opsCaseSubmit answers the page's move forms: back to the page (303)
// after the move, or the page with what went wrong; a form sent again
// (an offer's double click) moves nothing. Amounts are typed in
// dollars and cents ("1250.50").
func (con *Console) opsCaseSubmit(c *gin.Context) {
	action := brokerage.Action(c.Param("action"))
	if !slices.Contains(brokerage.AllActions, action) {
		con.renderOpsCases(c, http.StatusNotFound, fmt.Sprintf("%q is not a move of a brokerage case", action), "")
		return
	}
	in := brokerage.MoveInput{Note: c.PostForm("note"), Reason: c.PostForm("reason"), Share: c.PostForm("share") != ""}
	var err error
	if action == brokerage.RecordOffer {
		in.AmountCents, err = formCents("amount_cents", c.PostForm("amount"))
	}
	if action == brokerage.CloseDeal {
		in.PriceCents, err = formCents("price_cents", c.PostForm("price"))
	}
	var v brokerage.View
	if err == nil {
		v, err = formOnce(con, c, func(ctx context.Context) (brokerage.View, error) {
			return con.svc.Brokerage.Move(ctx, c.Param("case_id"), action, in)
		})
	}
	if err != nil {
		status, problem := con.problem(c, err)
		con.renderOpsCases(c, status, problem, "")
		return
	}
	done := fmt.Sprintf("%s: %s, now %s", v.CaseID, action, v.Status)
	con.done(c, "/ops/brokerage", done)
}

// formCents reads an amount typed in dollars ("1250", "1,250.5") as
// cents, a validation error naming field otherwise.
func formCents(field, v string) (int64, error) {
	whole, frac, _ := strings.Cut(strings.TrimSpace(v), ".")
	if g := strings.Split(whole, ","); len(g) > 1 { // thousands: 1,250 or 12,500,000
		for i, part := range g {
			if part == "" || len(part) > 3 || (i > 0 && len(part) != 3) {
				return 0, fault.Invalid(field, "must be an amount in dollars, such as 1250 or 1250.50")
			}
		}
		whole = strings.Join(g, "")
	}
	if len(frac) < 2 {
		frac += strings.Repeat("0", 2-len(frac))
	}
	d, err1 := strconv.ParseInt(whole, 10, 64)
	cents, err2 := strconv.ParseInt(frac, 10, 64)
	digits := func(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }
	if !digits(whole) || !digits(frac) || err1 != nil || err2 != nil || len(frac) > 2 || d > brokerage.MaxBudgetCents/100 {
		return 0, fault.Invalid(field, "must be an amount in dollars, such as 1250 or 1250.50")
	}
	return d*100 + cents, nil
}
