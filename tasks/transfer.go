package tasks

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

// TaskType implements Payload.
func (TransferPushPayload) TaskType() string { return TypeTransferPush }
