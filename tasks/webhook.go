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

// WebhookSchedule is the wait before each retry of a failed delivery
// (jittered ±10 % by the worker): the first within 15 s, then growing
// gaps, for about three days in all. The same event id goes each time.
var WebhookSchedule = []time.Duration{
	10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute,
	30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour,
	12 * time.Hour, 12 * time.Hour, 12 * time.Hour, 12 * time.Hour, 12 * time.Hour,
}
