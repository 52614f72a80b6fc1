package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// lostBatch is how many handed-over outbox entries one pass looks at,
// newest first.
const lostBatch = 500

// stillToDo says, for a task type, whether the work of a task (by its
// payload) is still to be done: its row has not reached the state its task
// moves it to. Bulk ops and tool jobs are rescued by their rows (rescue);
// periodic tasks are made again by the scheduler.
var stillToDo = map[string]func(db *gorm.DB, payload []byte) (bool, error){
	tasks.TypeWebhookDeliver: rowIn(func(p tasks.WebhookDeliverPayload) string { return p.DeliveryID },
		&models.WebhookDelivery{}, "state = ?", models.DeliveryPending),
	tasks.TypePaymentRefund: rowIn(func(p tasks.PaymentRefundPayload) string { return p.RefundID },
		&models.Refund{}, "card_status = ?", models.CardRefundPending),
	tasks.TypePaymentReturn: rowIn(func(p tasks.PaymentReturnPayload) string { return p.PaymentID },
		&models.Payment{}, "status = ? AND order_id IS NULL AND charge_id IS NOT NULL", models.PaymentSucceeded),
	tasks.TypeLookupRun: rowIn(func(p tasks.LookupRunPayload) string { return p.LookupID },
		&models.Lookup{}, "state = ?", models.LookupPending),
	tasks.TypeSettlementRun: rowIn(func(p tasks.SettlementRunPayload) string { return p.RunID },
		&models.SettlementRun{}, "status IN ?", []string{models.RunQueued, models.RunRunning}),
	tasks.TypeCanaryRun: rowIn(func(p tasks.CanaryRunPayload) string { return p.CanaryID },
		&models.Canary{}, "completed_at IS NULL"),
	tasks.TypeBrokerageProbe: rowIn(func(p tasks.BrokerageProbePayload) string { return p.Domain },
		&models.SiteCheck{}, "status = ?", models.SiteCheckPending),
	// A push is to do until a step other than transfer.requested settles
	// it (completed, failed, or not made).
	tasks.TypeTransferPush: rowIn(func(p tasks.TransferPushPayload) int64 { return p.Push },
		&models.OrderStep{}, "NOT EXISTS (SELECT 1 FROM order_steps s WHERE s.push_id = order_steps.id AND s.event <> ?)", order.EventTransferRequested),
}

// rowIn is the stillToDo of a task whose payload names (by primary key) a
// row of model: the work is to do while the row matches cond.
func rowIn[P tasks.Payload, K any](id func(P) K, model any, cond string, args ...any) func(*gorm.DB, []byte) (bool, error) {
	return func(db *gorm.DB, payload []byte) (bool, error) {
		var p P
		if err := json.Unmarshal(payload, &p); err != nil {
			return false, nil // not a payload of ours: nothing to rescue
		}
		var n int64
		err := db.Model(model).Where(clause.Eq{Column: clause.PrimaryColumn, Value: id(p)}).Where(cond, args...).Count(&n).Error
		return n > 0, err
	}
}

// handBack finds the tasks Redis lost while their work is still to do (a
// Redis that restarted without its data, a FLUSHALL, a failover to a
// replica that was behind) and hands their outbox entries back to the
// sweep, which enqueues each again under the same task id: Postgres, not
// Redis, says what must happen. An entry is looked at once it has been
// with Redis for stallAfter; its task is lost when asynq has it neither
// waiting, running nor retrying. It answers how many it handed back.
func (h *rescue) handBack(ctx context.Context, now time.Time) (int, error) {
	db := h.db.WithContext(ctx)
	var entries []models.OutboxEntry
	err := db.Select("id", "task_type", "payload", "queue").
		Where("enqueued_at IS NOT NULL AND enqueued_at < ? AND task_type IN ?", now.Add(-stallAfter), slices.Sorted(maps.Keys(stillToDo))).
		Order("enqueued_at DESC").Limit(lostBatch).Find(&entries).Error
	if err != nil {
		return 0, fmt.Errorf("find handed-over outbox entries: %w", err)
	}
	handed := 0
	for _, e := range entries {
		todo, err := stillToDo[e.TaskType](db, e.Payload)
		if err != nil {
			return handed, fmt.Errorf("is the work of %s %s still to do: %w", e.TaskType, e.ID, err)
		}
		if !todo {
			continue
		}
		info, err := h.inspector.GetTaskInfo(e.Queue, e.ID)
		switch {
		case errors.Is(err, asynq.ErrTaskNotFound), errors.Is(err, asynq.ErrQueueNotFound):
		case err != nil:
			return handed, fmt.Errorf("look up task %s: %w", e.ID, err)
		case info.State != asynq.TaskStateArchived && info.State != asynq.TaskStateCompleted:
			continue // waiting, running or retrying
		}
		if info != nil { // archived or completed: free its id for the sweep
			if err := h.inspector.DeleteTask(e.Queue, e.ID); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
				return handed, fmt.Errorf("free task id %s: %w", e.ID, err)
			}
		}
		res := db.Model(&models.OutboxEntry{}).Where("id = ? AND enqueued_at IS NOT NULL", e.ID).
			Updates(map[string]any{"enqueued_at": nil, "last_error": "its task was lost by Redis; handed back to the sweep"})
		if res.Error != nil {
			return handed, fmt.Errorf("hand back outbox entry %s: %w", e.ID, res.Error)
		}
		handed += int(res.RowsAffected)
	}
	return handed, nil
}
