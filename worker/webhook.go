package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/tasks"
)

// webhookDeliver makes one attempt at a webhook delivery; asynq's retries,
// on tasks.WebhookSchedule, are the later ones, and the last attempt
// settles a failure for good. Settling a delivery gives the next one of
// its subject its task, through outbox.
type webhookDeliver struct {
	webhooks *webhook.Service
	outbox   *outbox.Outbox
}

func (h *webhookDeliver) Work(ctx context.Context, p tasks.WebhookDeliverPayload) error {
	err := h.webhooks.Deliver(ctx, h.outbox, p.DeliveryID, lastAttempt(ctx))
	if errors.Is(err, gorm.ErrRecordNotFound) { // the delivery's rows are gone (kept 30 days)
		return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	return err
}

// webhookFanOut gives the deliveries of a batch their webhook:deliver
// tasks (webhook.Service.FanOut); a retry enqueues those still missing.
type webhookFanOut struct {
	webhooks *webhook.Service
	outbox   *outbox.Outbox
}

func (h *webhookFanOut) Work(ctx context.Context, p tasks.WebhookFanOutPayload) error {
	return h.webhooks.FanOut(ctx, h.outbox, p.DeliveryIDs)
}
