package tasks

import "time"

// TypeWebhookDeliver delivers one event to one partner endpoint
// (models.WebhookDelivery), retried on WebhookSchedule.
const TypeWebhookDeliver = "webhook:deliver"

// WebhookDeliverPayload names the delivery; event and endpoint are in its row.
type WebhookDeliverPayload struct {
	DeliveryID string `json:"delivery_id"`
}

// TaskType implements Payload.
func (WebhookDeliverPayload) TaskType() string { return TypeWebhookDeliver }

// TypeWebhookFanOut gives the deliveries one transaction recorded (a
// settlement batch's order.settled events) their webhook:deliver tasks:
// one outbox entry stands for all of them, where a task each would cost
// the transaction an entry, an enqueue and a mark per delivery.
const TypeWebhookFanOut = "webhook:fanout"

// WebhookFanOutPayload names the deliveries. Each gets a webhook:deliver
// task whose id is the delivery's id, so that a fan-out run again makes
// none twice.
type WebhookFanOutPayload struct {
	DeliveryIDs []string `json:"delivery_ids"`
}

// TaskType implements Payload.
func (WebhookFanOutPayload) TaskType() string { return TypeWebhookFanOut }

// WebhookSchedule is the wait before each retry of a failed delivery
// (jittered ±10 % by the worker): the first within 15 s, then growing
// gaps, for about three days in all. The same event id goes each time.
var WebhookSchedule = []time.Duration{
	10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute,
	30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour,
	12 * time.Hour, 12 * time.Hour, 12 * time.Hour, 12 * time.Hour, 12 * time.Hour,
}
