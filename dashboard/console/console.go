// Package console is the ops and finance pages under /ops: the queues at
// a glance, partners (terms, credentials), listings, partners' orders,
// webhook deliveries, brokerage cases, the hosted checkout's payments,
// the finance of the last periods, settlement runs and payouts. Each page
// reads and moves through the same services as the ops API (/api/ops),
// and its forms answer as those routes do. It has no guard of its own: the api package mounts it
// behind the ops login and the cross-site check of every ops route.
package console

import (
	"cmp"
	"context"
	"log/slog"

	"github.com/gin-gonic/gin"
	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/idempotency"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/services"
	"github.com/domaind/domaind/models"
)

// Console is the ops and finance pages.
type Console struct {
	svc *services.Set
	// inspector reads the queues for the index.
	inspector *asynq.Inspector
	// ob carries the tasks the pages' forms make (a redelivery).
	ob *outbox.Outbox
	// monitoring says this process serves the queue dashboard.
	monitoring bool
	// secureCookies says the service is served over https, so that the
	// pages' cookies go over it only.
	secureCookies bool
	log           *slog.Logger
}

// New returns the console over svc, reading the queues through inspector
// and making tasks through ob; monitoring says the queue dashboard is
// served beside it, and secureCookies that the service is served over
// https.
func New(svc *services.Set, inspector *asynq.Inspector, ob *outbox.Outbox, monitoring, secureCookies bool, log *slog.Logger) *Console {
	return &Console{svc: svc, inspector: inspector, ob: ob, monitoring: monitoring, secureCookies: secureCookies, log: log}
}

// Register adds the pages to r at the paths under /ops that r's prefix
// makes them (the api package's group is /ops itself).
func (con *Console) Register(r gin.IRoutes) {
	r.GET("", con.opsIndex)
	r.GET("/partners", con.opsPartnersPage)
	r.POST("/partners", con.opsPartnerSubmit)
	r.POST("/partners/:id/credentials", con.opsCredentialSubmit)
	r.POST("/partners/:id/:action", con.opsPartnerSubmit)
	r.GET("/listings", con.opsListingsPage)
	r.POST("/listings", con.opsListingSubmit)
	r.POST("/listings/import", con.opsListingImport)
	r.POST("/listings/:id/:action", con.opsListingSubmit)
	r.GET("/orders", con.opsOrdersPage)
	r.POST("/orders/:public_id/:action", con.opsOrderSubmit)
	r.GET("/settlements", con.opsSettlementsPage)
	r.POST("/settlements/runs", con.opsSettlementSubmit)
	r.GET("/settlements/:id", con.opsSettlementPage)
	r.GET("/brokerage", con.opsCasesPage)
	r.POST("/brokerage/:case_id/:action", con.opsCaseSubmit)
	r.GET("/payments", con.opsPaymentsPage)
	r.POST("/payments/:id/paid-by-hand", con.opsPaymentByHandSubmit)
	r.POST("/refunds/:id/paid-by-hand", con.opsRefundByHandSubmit)
	r.POST("/refunds/:id/retry", con.opsRefundRetrySubmit)
	r.GET("/webhooks", con.opsWebhooksPage)
	r.POST("/webhooks/redeliver", con.opsRedeliverSubmit)
	r.GET("/finance", con.financePage)
	r.GET("/payouts", con.opsPayoutsPage)
	r.GET("/payouts.csv", con.payoutsCSV)
	r.POST("/payouts/:id/mark-paid", con.opsPayoutSubmit)
}

// render writes the page template name with data.
func (con *Console) render(c *gin.Context, status int, name string, data any) {
	if err := page.Render(c.Writer, status, name, data, ""); err != nil {
		con.log.ErrorContext(c.Request.Context(), "render page", "page", name, "err", err)
	}
}

// problem is the status and words a page shows for err; a fault of ours
// is logged (its words are generic).
func (con *Console) problem(c *gin.Context, err error) (int, string) {
	status, words, known := page.Problem(err)
	if !known {
		con.log.ErrorContext(c.Request.Context(), "ops page failed", "route", c.FullPath(), "err", err)
	}
	return status, words
}

// formOnce runs do for a form whose resend must not do it again (a
// partner added, a credential issued, an offer recorded) once, a resend
// answered with its result (idempotency.Once). Such a form carries the
// page's once token.
func formOnce[T any](con *Console, c *gin.Context, do func(context.Context) (T, error)) (T, error) {
	return idempotency.Once(c.Request.Context(), con.svc.Idempotency, "ops", c.PostForm(idempotency.FormField), do)
}

// partnerNames says a partner's name for the pages, or its id when
// partners do not have it.
func partnerNames(partners []models.Partner) func(id string) string {
	names := make(map[string]string, len(partners))
	for _, p := range partners {
		names[p.ID] = p.Name
	}
	return func(id string) string { return cmp.Or(names[id], id) }
}
