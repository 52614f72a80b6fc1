package tasks

import "github.com/hibiken/asynq"

// TypeTransferPush pushes a sold domain to its buyer's registrar (the
// delivery of a partner order), through the registry provider.
const TypeTransferPush = "transfer:push"

// TransferPushPayload names the order and the push: Push is the id of the
// timeline step that started it, so a retried or resumed task is
// recognised as the same push.
type TransferPushPayload struct {
	OrderID   string `json:"order_id"`
	Push      int64  `json:"push"`
	Recipient string `json:"recipient"`
}

// NewTransferPushTask makes the task of one push.
func NewTransferPushTask(p TransferPushPayload) (*asynq.Task, error) {
	return newTask(TypeTransferPush, p)
}

// ParseTransferPush decodes the payload of a TypeTransferPush task.
func ParseTransferPush(t *asynq.Task) (TransferPushPayload, error) {
	return parse[TransferPushPayload](t)
}

// TypePaymentRefund gives a hosted order's refund (models.Refund) back to
// the buyer's card through the payment provider, once.
const TypePaymentRefund = "payment:refund"

// PaymentRefundPayload names the refund.
type PaymentRefundPayload struct {
	RefundID string `json:"refund_id"`
}

// NewPaymentRefundTask makes the task of refund id.
func NewPaymentRefundTask(id string) (*asynq.Task, error) {
	return newTask(TypePaymentRefund, PaymentRefundPayload{RefundID: id})
}

// ParsePaymentRefund decodes the payload of a TypePaymentRefund task.
func ParsePaymentRefund(t *asynq.Task) (PaymentRefundPayload, error) {
	return parse[PaymentRefundPayload](t)
}

// TypePaymentReturn gives back the whole charge of a hosted checkout
// payment that paid for no order (models.Payment), once.
const TypePaymentReturn = "payment:return"

// PaymentReturnPayload names the payment.
type PaymentReturnPayload struct {
	PaymentID string `json:"payment_id"`
}

// NewPaymentReturnTask makes the task of payment id.
func NewPaymentReturnTask(id string) (*asynq.Task, error) {
	return newTask(TypePaymentReturn, PaymentReturnPayload{PaymentID: id})
}

// ParsePaymentReturn decodes the payload of a TypePaymentReturn task.
func ParsePaymentReturn(t *asynq.Task) (PaymentReturnPayload, error) {
	return parse[PaymentReturnPayload](t)
}

// TypePaymentReconcile settles the payments of the hosted checkout left
// pending by a crash or a lost answer (payment.Book.Reconcile).
const TypePaymentReconcile = "payment:reconcile"

// NewPaymentReconcileTask makes the periodic reconciliation. It has no
// payload.
func NewPaymentReconcileTask() *asynq.Task { return asynq.NewTask(TypePaymentReconcile, nil) }
