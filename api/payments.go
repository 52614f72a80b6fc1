package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/dashboard/console"
)

// listPayments answers GET /api/ops/payments: every charge of the hosted
// checkout, newest first, for finance to tie the provider's statements to
// orders.
func (s *Server) listPayments(c *gin.Context) error {
	f, err := console.PaymentFilter(c)
	if err != nil {
		return err
	}
	payments, next, err := s.svc.Payments.List(c.Request.Context(), f)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"payments": payments, "next_cursor": httpjson.Nullable(next)})
	return nil
}

// paidWith is the body of the moves that record money paid outside the
// service's processors: a payout, or a buyer paid back by hand.
type paidWith struct {
	// Reference says how: a bank transfer's reference, say.
	Reference string `json:"reference"`
}

// paymentPaidByHand answers POST /api/ops/payments/{id}/paid-by-hand
// {reference}: ops paid back by hand a charge whose return was given up;
// the payment after it.
func (s *Server) paymentPaidByHand(c *gin.Context) error {
	var in paidWith
	if err := httpjson.DecodeJSON(c, &in, false); err != nil {
		return err
	}
	p, err := s.svc.Payments.PaidBackByHand(c.Request.Context(), c.Param("id"), in.Reference)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, p)
	return nil
}

// refundPaidByHand answers POST /api/ops/refunds/{id}/paid-by-hand
// {reference}: ops paid back by hand a refund whose card refund failed;
// its order after it, with the timeline.
func (s *Server) refundPaidByHand(c *gin.Context) error {
	var in paidWith
	if err := httpjson.DecodeJSON(c, &in, false); err != nil {
		return err
	}
	o, err := s.svc.Orders.RefundPaidByHand(c.Request.Context(), c.Param("id"), in.Reference)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, o)
	return nil
}

// retryCardRefund answers POST /api/ops/refunds/{id}/retry: a refund
// whose card refund failed is asked for again under its own key (a
// refund the processor made for it is found, not made twice); its order
// after it, with the timeline.
func (s *Server) retryCardRefund(c *gin.Context) error {
	o, err := s.svc.Orders.RetryCardRefund(c.Request.Context(), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, o)
	return nil
}

// getBacklog answers GET /api/ops/backlog: the work waiting for ops,
// counted by kind, and the oldest console.BacklogLimit items of each
// kind, as the ops index shows it.
func (s *Server) getBacklog(c *gin.Context) error {
	ctx := c.Request.Context()
	counts, err := s.svc.Backlog.Counts(ctx)
	if err != nil {
		return err
	}
	items, err := s.svc.Backlog.List(ctx, console.BacklogLimit)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"counts": counts, "items": items})
	return nil
}
