package console

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	partnerapi "github.com/domaind/domaind/api/partner"
	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/models"
)

// OrderFilter reads the ops order filters from the query: the partner
// API's, plus partner_id and environment.
func OrderFilter(c *gin.Context) (order.Filter, error) {
	f, err := partnerapi.OrderFilter(c)
	if err != nil {
		return f, err
	}
	f.PartnerID, f.Environment = c.Query("partner_id"), c.Query("environment")
	return f, models.CheckEnvironmentFilter(f.Environment)
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
	// Unconfirmed says its push awaits ops: the registry left the
	// outcome unknown.
	Unconfirmed bool
}

// opsOrdersPage answers GET /ops/orders: a page of orders, newest first,
// filtered as GET /api/ops/orders is, with a form for each move their
// status allows.
func (con *Console) opsOrdersPage(c *gin.Context) {
	con.renderOpsOrders(c, http.StatusOK, "", con.notice(c))
}

// renderOpsOrders shows the page of the query's filters with status and a
// problem or a notice.
func (con *Console) renderOpsOrders(c *gin.Context, status int, problem, done string) {
	ctx := c.Request.Context()
	view := opsOrdersPageData{Title: "Partner orders", Error: problem, Done: done, Statuses: order.Statuses,
		Environments: []string{models.EnvLive, models.EnvSandbox},
		Status:       c.Query("status"), Environment: c.Query("environment"), PartnerID: c.Query("partner_id"), Domain: c.Query("domain")}
	fail := func(err error) {
		if view.Error == "" {
			status, view.Error = con.problem(c, err)
		}
	}
	partners, err := con.svc.Partners.All(ctx)
	if err != nil {
		fail(err)
	}
	view.Partners = partners
	name := partnerNames(partners)
	var orders []order.View
	var next string
	f, err := OrderFilter(c)
	if err == nil {
		orders, next, err = con.svc.Orders.List(ctx, f)
	}
	if err != nil {
		fail(err)
	}
	var unconfirmed map[string]bool
	if len(orders) > 0 {
		ids := make([]string, len(orders))
		for i, o := range orders {
			ids[i] = o.PublicID
		}
		if unconfirmed, err = con.svc.Orders.Unconfirmed(ctx, ids); err != nil {
			fail(err)
		}
	}
	for _, o := range orders {
		view.Orders = append(view.Orders, opsOrderRow{View: o, Unconfirmed: unconfirmed[o.PublicID],
			Actions:   order.Actions(o.Status, o.Review, unconfirmed[o.PublicID]),
			Partner:   name(o.PartnerID),
			Price:     page.Money(o.Currency, o.SalePriceCents),
			CreatedAt: o.CreatedAt.Format(page.Time)})
	}
	view.Next = page.Older(c.Request.URL.Query(), "/ops/orders", next, "status", "environment", "partner_id", "domain")
	con.render(c, status, "ops_orders.html", view)
}

// opsOrderSubmit answers the page's move forms: back to the page (303)
// after the move, or the page with what went wrong.
func (con *Console) opsOrderSubmit(c *gin.Context) {
	action := order.Action(c.Param("action"))
	if !slices.Contains(order.AllActions, action) {
		con.renderOpsOrders(c, http.StatusNotFound, fmt.Sprintf("%q is not a move of an order", action), "")
		return
	}
	o, err := con.svc.Orders.Move(c.Request.Context(), c.Param("public_id"), action, order.MoveInput{Recipient: c.PostForm("recipient")})
	if err != nil {
		status, problem := con.problem(c, err)
		con.renderOpsOrders(c, status, problem, "")
		return
	}
	done := fmt.Sprintf("%s: %s, now %s", o.PublicID, action, o.Status)
	con.done(c, "/ops/orders", done)
}
