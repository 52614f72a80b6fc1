package api

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/brokerage"
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
	view := progressPage{Title: "Brokerage of " + v.Domain, Domain: v.Domain, Status: statusLabels[v.Status],
		Lead:   fmt.Sprintf(progressLeads[v.Status], v.Domain),
		Budget: page.Money(v.Currency, v.BudgetCents), Opened: v.CreatedAt.Format("2 January 2006"), Closed: v.ClosedAt != nil}
	if v.Deal != nil {
		view.Price = page.Money(v.Currency, v.Deal.PriceCents)
	}
	for _, st := range v.Timeline {
		ps := progressStep{At: st.At.Format(page.Time), Status: statusLabels[st.Status]}
		if st.AmountCents != nil {
			ps.Amount = page.Money(v.Currency, *st.AmountCents)
		}
		view.Steps = append(view.Steps, ps)
	}
	s.render(c, http.StatusOK, "brokerage_progress.html", view)
}
