package api

import (
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/models"
)

// StripeWebhookPath is where Stripe sends its notices (the endpoint to
// add in Stripe's dashboard).
const StripeWebhookPath = "/api/payments/stripe/webhook"

// maxNoticeBytes bounds a processor's notice: Stripe's events are a few
// kilobytes.
const maxNoticeBytes = 1 << 20

// stripeWebhook answers POST /api/payments/stripe/webhook: a notice
// signed with the endpoint's secret is kept once per event id and acted
// on by the worker (payment:event), and Stripe told 200; a notice sent
// again is answered 200 and changes nothing. One without a valid, fresh
// signature is refused (401 invalid_signature), and so is every notice
// when the live checkout is not on Stripe (404).
func (s *Server) stripeWebhook(c *gin.Context) error {
	n, ok := s.svc.Processors[models.EnvLive].(payment.Redirector)
	if !ok || n.Name() != "stripe" {
		return fault.New(fault.NotFound, "this deployment takes no payments through Stripe (DOMAIND_PAYMENT_PROVIDER)")
	}
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return err
	}
	ev, err := n.ParseEvent(body, c.GetHeader("Stripe-Signature"))
	if err != nil {
		return &fault.Error{Code: fault.InvalidSignature, Err: err,
			Message: "the notice's Stripe-Signature is missing, wrong or older than five minutes: check DOMAIND_STRIPE_WEBHOOK_SECRET against the endpoint's signing secret"}
	}
	if ev.Kind == "" {
		c.JSON(http.StatusOK, gin.H{"received": true, "acted_on": false})
		return nil
	}
	fresh, err := s.svc.Payments.Receive(c.Request.Context(), n.Name(), ev)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"received": true, "acted_on": fresh})
	return nil
}
