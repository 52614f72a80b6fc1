package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/internal/checkout"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/tasks"
)

// transferPush pushes a sold domain to its buyer's registrar; a registry
// that is down is retried on the type's backoff, and the last attempt
// leaves the push unconfirmed for ops, who look at the registry.
type transferPush struct {
	orders   *order.Service
	registry registry.Provider
}

func (h *transferPush) Work(ctx context.Context, p tasks.TransferPushPayload) error {
	err := h.orders.Push(ctx, p, h.registry, lastAttempt(ctx))
	if e, ok := fault.As(err); ok && e.Code == fault.NotFound { // the order is gone: nothing to push
		return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	return err
}

// cardRefund gives a hosted order's refund back to the buyer's card; a
// provider that fails is retried on the type's backoff, and the last
// attempt records the failure for ops (givesUp).
type cardRefund struct {
	orders    *order.Service
	providers map[string]payment.Provider
}

func (h *cardRefund) Work(ctx context.Context, p tasks.PaymentRefundPayload) error {
	err := h.orders.ReturnToCard(ctx, h.providers, p.RefundID)
	if givesUp(lastAttempt(ctx), err) {
		if ferr := h.orders.FailCardRefund(context.WithoutCancel(ctx), p.RefundID, err); ferr != nil {
			return ferr
		}
	}
	return err
}

// paymentReturn gives back a charge that paid for no order; the last
// attempt notes the failure on the payment for ops (givesUp).
type paymentReturn struct{ book *payment.Book }

func (h *paymentReturn) Work(ctx context.Context, p tasks.PaymentReturnPayload) error {
	err := h.book.Return(ctx, p.PaymentID)
	if givesUp(lastAttempt(ctx), err) {
		if ferr := h.book.FailReturn(context.WithoutCancel(ctx), p.PaymentID, err); ferr != nil {
			return ferr
		}
	}
	return err
}

// givesUp says whether err, a money-returning task's, ends its work for
// ops to pay back by hand: on its last attempt, unless the processor made
// the refund and only its record failed (payment.ErrNotRecorded). That
// one stays to do, and the rescue hands its task back.
func givesUp(last bool, err error) bool {
	return err != nil && last && !errors.Is(err, payment.ErrNotRecorded)
}

// paymentReconcile settles payments left pending by a crash or a lost
// answer.
type paymentReconcile struct{ book *payment.Book }

func (h *paymentReconcile) Work(ctx context.Context, _ tasks.PaymentReconcilePayload) error {
	const batch = 100
	_, err := h.book.Reconcile(ctx, batch)
	return err
}

// paymentEvent acts on a processor's notice of a payment made on its page.
type paymentEvent struct {
	checkout *checkout.Service
	book     *payment.Book
}

func (h *paymentEvent) Work(ctx context.Context, p tasks.PaymentEventPayload) error {
	return h.checkout.Apply(ctx, h.book, p.EventID)
}
