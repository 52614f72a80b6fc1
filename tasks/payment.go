package tasks

// TypePaymentRefund gives a hosted order's refund (models.Refund) back to
// the buyer's card through the payment provider, once.
const TypePaymentRefund = "payment:refund"

// PaymentRefundPayload names the refund.
type PaymentRefundPayload struct {
	RefundID string `json:"refund_id"`
}

// TaskType implements Payload.
func (PaymentRefundPayload) TaskType() string { return TypePaymentRefund }

// TypePaymentReturn gives back the whole charge of a hosted checkout
// payment that paid for no order (models.Payment), once.
const TypePaymentReturn = "payment:return"

// PaymentReturnPayload names the payment.
type PaymentReturnPayload struct {
	PaymentID string `json:"payment_id"`
}

// TaskType implements Payload.
func (PaymentReturnPayload) TaskType() string { return TypePaymentReturn }

// TypePaymentReconcile settles the payments of the hosted checkout left
// pending by a crash or a lost answer (payment.Book.Reconcile).
const TypePaymentReconcile = "payment:reconcile"

// PaymentReconcilePayload is the periodic reconciliation's: it has no
// fields.
type PaymentReconcilePayload struct{}

// TaskType implements Payload.
func (PaymentReconcilePayload) TaskType() string { return TypePaymentReconcile }

// TypePaymentEvent acts on a payment processor's notice (a Stripe webhook
// event) kept by payment.Book.Receive.
const TypePaymentEvent = "payment:event"

// PaymentEventPayload names the kept notice (models.PaymentEvent).
type PaymentEventPayload struct {
	EventID string `json:"event_id"`
}

// TaskType implements Payload.
func (PaymentEventPayload) TaskType() string { return TypePaymentEvent }
