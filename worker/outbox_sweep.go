package worker

import (
	"context"
	"time"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/tasks"
)

// sweepGrace leaves fresh entries to the fast path of the request that wrote them.
const sweepGrace = 3 * time.Second

// outboxSweep enqueues outbox entries the fast path missed.
type outboxSweep struct{ outbox *outbox.Outbox }

func (h *outboxSweep) Work(ctx context.Context, _ tasks.OutboxSweepPayload) error {
	const batch = 500
	for {
		n, err := h.outbox.Sweep(ctx, sweepGrace, batch)
		if err != nil || n < batch {
			return err
		}
	}
}
