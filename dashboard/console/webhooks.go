package console

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
)

// opsWebhooksPageData is what the ops webhooks page shows.
type opsWebhooksPageData struct {
	Title, Error, Done string
	// The filters as asked, and what they can be.
	PartnerID, Environment, State string
	Partners                      []models.Partner
	Environments, States          []string
	Endpoints                     []opsEndpointRow
	Deliveries                    []opsDeliveryRow
	// Next is the link to the next page ("" on the last).
	Next string
}

// opsEndpointRow is a partner's endpoint.
type opsEndpointRow struct {
	Partner string
	models.WebhookEndpoint
}

// opsDeliveryRow is a delivery as a row of the page.
type opsDeliveryRow struct {
	webhook.DeliveryView
	Partner, Created, Latency string
}

// opsWebhooksPage answers GET /ops/webhooks: every partner's endpoints
// (an inactive one, given up after failures, marked), and the
// deliveries, newest first, filtered by partner, environment and state,
// each with its event, attempts, last answer and how long it took to
// arrive, and a form to send its event again.
func (con *Console) opsWebhooksPage(c *gin.Context) {
	con.renderOpsWebhooks(c, http.StatusOK, "", con.notice(c))
}

func (con *Console) renderOpsWebhooks(c *gin.Context, status int, problem, done string) {
	ctx := c.Request.Context()
	view := opsWebhooksPageData{Title: "Webhooks", Error: problem, Done: done, PartnerID: c.Query("partner_id"),
		Environment: c.Query("environment"), State: c.Query("state"), Environments: []string{models.EnvLive, models.EnvSandbox},
		States: webhook.DeliveryStates}
	fail := func(err error) {
		if view.Error == "" {
			status, view.Error = con.problem(c, err)
		}
	}
	listed, err := con.svc.Partners.List(ctx)
	if err != nil {
		fail(err)
	}
	for _, l := range listed {
		view.Partners = append(view.Partners, l.Partner)
		for _, e := range l.Webhooks {
			view.Endpoints = append(view.Endpoints, opsEndpointRow{Partner: l.Name, WebhookEndpoint: e})
		}
	}
	name := partnerNames(view.Partners)
	limit, err := httpjson.PageLimit(c)
	var deliveries []webhook.DeliveryView
	var next string
	if err == nil {
		deliveries, next, err = con.svc.Webhooks.Deliveries(ctx, webhook.DeliveryFilter{PartnerID: view.PartnerID,
			Environment: view.Environment, State: view.State, Limit: limit, Cursor: c.Query("cursor")})
	}
	if err != nil {
		fail(err)
	}
	for _, d := range deliveries {
		row := opsDeliveryRow{DeliveryView: d, Partner: name(d.PartnerID), Created: d.CreatedAt.UTC().Format(page.Time), Latency: page.Took(d.Latency())}
		view.Deliveries = append(view.Deliveries, row)
	}
	view.Next = page.Older(c.Request.URL.Query(), "/ops/webhooks", next, "partner_id", "environment", "state")
	con.render(c, status, "ops_webhooks.html", view)
}

// opsRedeliverSubmit answers a delivery's form as POST
// /api/partner/v1/events/{id}/redeliver does for the partner: a new
// delivery of the event to its endpoint now; back to the page (303)
// saying so, or the page with what went wrong (an inactive endpoint is a
// conflict).
func (con *Console) opsRedeliverSubmit(c *gin.Context) {
	partnerID, env, eventID := c.PostForm("partner_id"), c.PostForm("environment"), c.PostForm("event_id")
	id, err := con.svc.Webhooks.Redeliver(c.Request.Context(), con.ob, partnerID, env, eventID)
	if err != nil {
		status, problem := con.problem(c, err)
		con.renderOpsWebhooks(c, status, problem, "")
		return
	}
	done := fmt.Sprintf("%s: sent again to %s's %s endpoint as delivery %s", eventID, partnerID, env, id)
	con.done(c, "/ops/webhooks", done)
}
