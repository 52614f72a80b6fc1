package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/brokerage"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
)

// getCase answers GET /api/ops/brokerage/{case_id}: any case with its
// timeline.
func (s *Server) getCase(c *gin.Context) error {
	v, err := s.svc.Brokerage.Ops(c.Request.Context(), c.Param("case_id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, v)
	return nil
}

// moveCase answers POST /api/ops/brokerage/{case_id}/{action}: the case
// after the move, or 409 naming its status when the move is not allowed.
// record-offer takes {"amount_cents", "note"}, close-deal
// {"price_cents"}, close-no-deal {"reason"} (optional), contact-owner no
// body.
func (s *Server) moveCase(action brokerage.Action) func(c *gin.Context) error {
	return func(c *gin.Context) error {
		var in brokerage.MoveInput
		if action != brokerage.ContactOwner {
			if err := httpjson.DecodeJSON(c, &in, action == brokerage.CloseNoDeal); err != nil {
				return err
			}
		}
		v, err := s.svc.Brokerage.Move(c.Request.Context(), c.Param("case_id"), action, in)
		if err != nil {
			return err
		}
		c.JSON(http.StatusOK, v)
		return nil
	}
}

// progressPage is what the buyer's progress page shows: a first sentence
// that says where the case stands, no notes, no money but the offers ops
// shared and the price.
type progressPage struct {
	Title, Domain, Lead, Status, Budget, Price, Opened string
	Closed                                             bool
	Steps                                              []progressStep
}

// progressLeads are the progress page's first sentence by status (%s is
// the name).
var progressLeads = map[string]string{
	models.CaseOpen:            "We have your request for %s and will contact its owner shortly.",
	models.CaseContactingOwner: "We are contacting the owner of %s to ask whether they will sell it to you.",
	models.CaseNegotiating:     "We are negotiating with the owner of %s on your behalf.",
	models.CaseClosedDeal:      "The owner of %s agreed to sell it to you at the price below.",
	models.CaseClosedNoDeal:    "The owner of %s did not agree to a sale, and this case is closed.",
}

type progressStep struct {
	At, Status, Amount string
}

// statusLabels name the case statuses for the buyer.
var statusLabels = map[string]string{
	models.CaseOpen:            "Case opened",
	models.CaseContactingOwner: "Contacting the owner",
	models.CaseNegotiating:     "Negotiating with the owner",
	models.CaseClosedDeal:      "Deal closed",
	models.CaseClosedNoDeal:    "Closed without a deal",
}

// brokerageProgress answers GET /brokerage/progress?t=: the buyer's
// no-login page of a case's status and timeline; the signed token in the
// link is the whole authority.
func (s *Server) brokerageProgress(c *gin.Context) {
	v, err := s.svc.Brokerage.Progress(c.Request.Context(), c.Query("t"))
	if err != nil {
		status, msg := s.formError(c, err)
		s.render(c, status, "brokerage_progress_error.html", gin.H{"Title": "Progress link error", "Message": msg})
		return
	}
	page := progressPage{Title: "Brokerage of " + v.Domain, Domain: v.Domain, Status: statusLabels[v.Status],
		Lead:   fmt.Sprintf(progressLeads[v.Status], v.Domain),
		Budget: money(v.Currency, v.BudgetCents), Opened: v.CreatedAt.Format("2 January 2006"), Closed: v.ClosedAt != nil}
	if v.Deal != nil {
		page.Price = money(v.Currency, v.Deal.PriceCents)
	}
	for _, st := range v.Timeline {
		ps := progressStep{At: st.At.Format(pageTime), Status: statusLabels[st.Status]}
		if st.AmountCents != nil {
			ps.Amount = money(v.Currency, *st.AmountCents)
		}
		page.Steps = append(page.Steps, ps)
	}
	s.render(c, http.StatusOK, "brokerage_progress.html", page)
}

// opsCasesPageData is what the ops brokerage page shows.
type opsCasesPageData struct {
	Title, Error, Done string
	Status             string
	Statuses           []string
	Cases              []opsCaseRow
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
func (s *Server) opsCasesPage(c *gin.Context) {
	s.renderOpsCases(c, http.StatusOK, "", c.Query("done"))
}

// renderOpsCases shows the page of the query's filter with status and a
// problem or a notice.
func (s *Server) renderOpsCases(c *gin.Context, status int, problem, done string) {
	ctx := c.Request.Context()
	page := opsCasesPageData{Title: "Brokerage cases", Error: problem, Done: done, Statuses: brokerage.Statuses, Status: c.Query("status")}
	fail := func(err error) {
		if page.Error == "" {
			status, page.Error = s.formError(c, err)
		}
	}
	partners, err := s.svc.Partners.All(ctx)
	if err != nil {
		fail(err)
	}
	name := partnerNames(partners)
	cases, next, err := s.svc.Brokerage.List(ctx, brokerage.Filter{Status: page.Status, Cursor: c.Query("cursor")})
	if err != nil {
		fail(err)
	}
	for _, v := range cases {
		row := opsCaseRow{View: v, Actions: brokerage.Actions(v.Status), Partner: name(v.PartnerID),
			Budget: money(v.Currency, v.BudgetCents), CreatedAt: v.CreatedAt.Format(pageTime)}
		if d := v.Deal; d != nil {
			row.Outcome = fmt.Sprintf("%s, fee %s, commission %s", money(v.Currency, d.PriceCents),
				money(v.Currency, d.FeeCents), money(v.Currency, d.CommissionCents))
		}
		page.Cases = append(page.Cases, row)
	}
	page.Next = olderPage(c, "/ops/brokerage", next, "status")
	s.render(c, status, "ops_brokerage.html", page)
}

// opsCaseSubmit answers the page's move forms: back to the page (303)
// after the move, or the page with what went wrong. Amounts are typed in
// dollars and cents ("1250.50").
func (s *Server) opsCaseSubmit(c *gin.Context) {
	action := brokerage.Action(c.Param("action"))
	if !slices.Contains(brokerage.AllActions, action) {
		s.renderOpsCases(c, http.StatusNotFound, fmt.Sprintf("%q is not a move of a brokerage case", action), "")
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
		v, err = s.svc.Brokerage.Move(c.Request.Context(), c.Param("case_id"), action, in)
	}
	if err != nil {
		status, problem := s.formError(c, err)
		s.renderOpsCases(c, status, problem, "")
		return
	}
	done := fmt.Sprintf("%s: %s, now %s", v.CaseID, action, v.Status)
	c.Redirect(http.StatusSeeOther, "/ops/brokerage?"+url.Values{"done": {done}}.Encode())
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
