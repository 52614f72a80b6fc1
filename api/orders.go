package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	partnerapi "github.com/domaind/domaind/api/partner"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/models"
)

// listOrders answers GET /api/ops/orders: every partner's orders, newest
// first, with the partner API's filters, partner_id and environment.
func (s *Server) listOrders(c *gin.Context) error {
	f, err := opsOrderFilter(c)
	if err != nil {
		return err
	}
	orders, next, err := s.svc.Orders.List(c.Request.Context(), f)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"orders": orders, "next_cursor": httpjson.Nullable(next)})
	return nil
}

// opsOrderFilter reads the ops order filters from the query: the partner
// API's, plus partner_id and environment.
func opsOrderFilter(c *gin.Context) (order.Filter, error) {
	f, err := partnerapi.OrderFilter(c)
	if err != nil {
		return f, err
	}
	f.PartnerID, f.Environment = c.Query("partner_id"), c.Query("environment")
	return f, models.CheckEnvironmentFilter(f.Environment)
}

// getOrder answers GET /api/ops/orders/{public_id}.
func (s *Server) getOrder(c *gin.Context) error {
	o, err := s.svc.Orders.Ops(c.Request.Context(), c.Param("public_id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, o)
	return nil
}

// moveOrder answers POST /api/ops/orders/{public_id}/{action}: the order
// after the move, or 409 naming its status when the move is not allowed.
// start-transfer takes {"recipient"}; the other actions no body.
func (s *Server) moveOrder(action order.Action) func(c *gin.Context) error {
	return func(c *gin.Context) error {
		var in order.MoveInput
		if action == order.StartTransfer {
			if err := httpjson.DecodeJSON(c, &in, false); err != nil {
				return err
			}
		}
		o, err := s.svc.Orders.Move(c.Request.Context(), c.Param("public_id"), action, in)
		if err != nil {
			return err
		}
		c.JSON(http.StatusOK, o)
		return nil
	}
}

// opsOrdersPageData is what the ops orders page shows.
type opsOrdersPageData struct {
	Title, Error, Done string
	// The filters as asked, and what they can be.
	Status, Environment, PartnerID, Domain string
	Statuses, Environments                 []string
	Partners                               []models.Partner
	Orders                                 []opsOrderRow
	// Next is the link to the next page ("" on the last).
	Next string
}

// opsOrderRow is an order as a row of the page.
type opsOrderRow struct {
	order.View
	Partner   string
	Price     string
	CreatedAt string
	Actions   []order.Action
}

// opsOrdersPage answers GET /ops/orders: a page of orders, newest first,
// filtered as GET /api/ops/orders is, with a form for each move their
// status allows.
func (s *Server) opsOrdersPage(c *gin.Context) {
	s.renderOpsOrders(c, http.StatusOK, "", c.Query("done"))
}

// renderOpsOrders shows the page of the query's filters with status and a
// problem or a notice.
func (s *Server) renderOpsOrders(c *gin.Context, status int, problem, done string) {
	ctx := c.Request.Context()
	page := opsOrdersPageData{Title: "Partner orders", Error: problem, Done: done, Statuses: order.Statuses,
		Environments: []string{models.EnvLive, models.EnvSandbox},
		Status:       c.Query("status"), Environment: c.Query("environment"), PartnerID: c.Query("partner_id"), Domain: c.Query("domain")}
	fail := func(err error) {
		if page.Error == "" {
			status, page.Error = s.formError(c, err)
		}
	}
	partners, err := s.svc.Partners.All(ctx)
	if err != nil {
		fail(err)
	}
	page.Partners = partners
	name := partnerNames(partners)
	var orders []order.View
	var next string
	f, err := opsOrderFilter(c)
	if err == nil {
		orders, next, err = s.svc.Orders.List(ctx, f)
	}
	if err != nil {
		fail(err)
	}
	for _, o := range orders {
		page.Orders = append(page.Orders, opsOrderRow{View: o, Actions: order.Actions(o.Status, o.Review),
			Partner:   name(o.PartnerID),
			Price:     money(o.Currency, o.SalePriceCents),
			CreatedAt: o.CreatedAt.Format(pageTime)})
	}
	page.Next = olderPage(c, "/ops/orders", next, "status", "environment", "partner_id", "domain")
	s.render(c, status, "ops_orders.html", page)
}

// opsOrderSubmit answers the page's move forms: back to the page (303)
// after the move, or the page with what went wrong.
func (s *Server) opsOrderSubmit(c *gin.Context) {
	action := order.Action(c.Param("action"))
	if !slices.Contains(order.AllActions, action) {
		s.renderOpsOrders(c, http.StatusNotFound, fmt.Sprintf("%q is not a move of an order", action), "")
		return
	}
	o, err := s.svc.Orders.Move(c.Request.Context(), c.Param("public_id"), action, order.MoveInput{Recipient: c.PostForm("recipient")})
	if err != nil {
		status, problem := s.formError(c, err)
		s.renderOpsOrders(c, status, problem, "")
		return
	}
	done := fmt.Sprintf("%s: %s, now %s", o.PublicID, action, o.Status)
	c.Redirect(http.StatusSeeOther, "/ops/orders?"+url.Values{"done": {done}}.Encode())
}
