package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// The look of handBack over the handed-over outbox entries: a pass reads
// pages of lostBatch entries, newest first, among those still within
// their type's window (lostWindows), until it has looked at lostLooks
// pieces of work (an entry each, a fan-out one per delivery it names),
// and the next pass goes on from where it stopped (starting again from
// the newest once it has seen them all).
const (
	lostBatch = 500
	lostLooks = 20 * lostBatch
)

// lostWindows is, for each type handBack looks at, how long after its
// hand-over a task of that type is looked for: the longest it can live
// in asynq (lifetime: minutes for a lookup, about three and a half days
// for a fan-out and its deliveries), and lostQueueing more for the time
// it waits behind others in its queue. A task Redis loses on its last
// retry is still found, and a short-lived type's old entries are not
// looked up (the walk reads them back to lostWindow, and drops them).
var lostWindows = windows()

// lostWindow is the longest of lostWindows: how far back a pass reads.
var lostWindow = slices.Max(slices.Collect(maps.Values(lostWindows)))

const lostQueueing = 24 * time.Hour

// windows builds lostWindows. Every lifetime is bounded
// (TestLostWindowsOutliveEveryRescuedTask).
func windows() map[string]time.Duration {
	w := map[string]time.Duration{}
	for _, typ := range lostTypes() {
		d, _ := lifetime(typ)
		w[typ] = d + lostQueueing
	}
	return w
}

// lostTypes are the task types handBack looks at: those stillToDo knows,
// and fan-outs.
func lostTypes() []string {
	return append(slices.Sorted(maps.Keys(stillToDo)), tasks.TypeWebhookFanOut)
}

// lifetime is tasks.Spec.Lifetime of typ; a fan-out's is followed by that
// of the deliveries it enqueues. It answers false when asynq's default
// decides the delays.
func lifetime(typ string) (time.Duration, bool) {
	d, ok := tasks.SpecOf(typ).Lifetime()
	if typ == tasks.TypeWebhookFanOut {
		deliveries, known := lifetime(tasks.TypeWebhookDeliver)
		d, ok = d+deliveries, ok && known
	}
	return d, ok
}

// stillToDo says, for a task type, which of the payloads of its tasks name
// work still to be done: a row that has not reached the state its task
// moves it to. Bulk ops and tool jobs are rescued by their rows (rescue);
// periodic tasks are made again by the scheduler.
var stillToDo = map[string]toDoFunc{
	tasks.TypeWebhookDeliver: rowIn(func(p tasks.WebhookDeliverPayload) string { return p.DeliveryID },
		&models.WebhookDelivery{}, "id", "state = ?", models.DeliveryPending),
	tasks.TypePaymentRefund: rowIn(func(p tasks.PaymentRefundPayload) string { return p.RefundID },
		&models.Refund{}, "id", "card_status = ?", models.CardRefundPending),
	tasks.TypePaymentReturn: rowIn(func(p tasks.PaymentReturnPayload) string { return p.PaymentID },
		&models.Payment{}, "id", payment.ToReturn, payment.ReturnStatuses),
	tasks.TypePaymentEvent: rowIn(func(p tasks.PaymentEventPayload) string { return p.EventID },
		&models.PaymentEvent{}, "id", "done_at IS NULL"),
	tasks.TypeLookupRun: rowIn(func(p tasks.LookupRunPayload) string { return p.LookupID },
		&models.Lookup{}, "id", "state = ?", models.LookupPending),
	tasks.TypeSettlementRun: rowIn(func(p tasks.SettlementRunPayload) string { return p.RunID },
		&models.SettlementRun{}, "id", "status IN ?", []string{models.RunQueued, models.RunRunning}),
	tasks.TypeCanaryRun: rowIn(func(p tasks.CanaryRunPayload) string { return p.CanaryID },
		&models.Canary{}, "id", "completed_at IS NULL"),
	tasks.TypeBrokerageProbe: rowIn(func(p tasks.BrokerageProbePayload) string { return p.Domain },
		&models.SiteCheck{}, "domain", "status = ?", models.SiteCheckPending),
	// A push is to do until a step other than transfer.requested settles
	// it (completed, failed, unconfirmed, or not made).
	tasks.TypeTransferPush: rowIn(func(p tasks.TransferPushPayload) int64 { return p.Push },
		&models.OrderStep{}, "id", "NOT EXISTS (SELECT 1 FROM order_steps s WHERE s.push_id = order_steps.id AND s.event <> ?)", order.EventTransferRequested),
}

// toDoFunc answers, for each payload, whether its work is still to do.
type toDoFunc func(db *gorm.DB, payloads [][]byte) ([]bool, error)

// rowIn is the toDoFunc of a task whose payload names (by its key column)
// a row of model: the work is to do while the row matches cond. One query
// answers for every payload.
func rowIn[P tasks.Payload, K comparable](id func(P) K, model any, key, cond string, args ...any) toDoFunc {
	return func(db *gorm.DB, payloads [][]byte) ([]bool, error) {
		ids := make([]K, len(payloads))
		var asked []K
		decoded := make([]bool, len(payloads))
		for i, b := range payloads {
			var p P
			if json.Unmarshal(b, &p) == nil { // not a payload of ours: nothing to rescue
				ids[i], decoded[i] = id(p), true
				asked = append(asked, ids[i])
			}
		}
		var found []K
		if len(asked) > 0 {
			if err := db.Model(model).Where(key+" IN ?", asked).Where(cond, args...).Pluck(key, &found).Error; err != nil {
				return nil, err
			}
		}
		left := map[K]bool{}
		for _, k := range found {
			left[k] = true
		}
		todo := make([]bool, len(payloads))
		for i := range payloads {
			todo[i] = decoded[i] && left[ids[i]]
		}
		return todo, nil
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
	h.lostMu.Lock() // one pass at a time walks the entries
	defer h.lostMu.Unlock()
	handed, looks := 0, 0
	for looks < lostLooks {
		entries, err := h.nextLost(ctx, now)
		if err != nil || len(entries) == 0 {
			return handed, err
		}
		entries, weight := within(entries, lostLooks-looks)
		looks += weight
		h.lostAfter = &entries[len(entries)-1]
		n, err := h.handBackPage(ctx, entries)
		handed += n
		if err != nil {
			return handed, err
		}
	}
	return handed, nil
}

// within returns the first of entries whose work weighs at most budget
// (at least one entry, whatever it weighs), and their weight: an entry
// weighs one, a fan-out one per delivery it names.
func within(entries []models.OutboxEntry, budget int) ([]models.OutboxEntry, int) {
	weight := 0
	for i, e := range entries {
		w := 1
		if e.TaskType == tasks.TypeWebhookFanOut {
			var p tasks.WebhookFanOutPayload
			if json.Unmarshal(e.Payload, &p) == nil {
				w = max(len(p.DeliveryIDs), 1)
			}
		}
		if i > 0 && weight+w > budget {
			return entries[:i], weight
		}
		weight += w
	}
	return entries, weight
}

// nextLost reads the next page of handed-over entries of the types
// stillToDo knows and of fan-outs, each within its type's window, going
// on after h.lostAfter; at the end of the longest window it starts again
// from the newest.
func (h *rescue) nextLost(ctx context.Context, now time.Time) ([]models.OutboxEntry, error) {
	inWindow, args := withinWindows(now)
	q := h.db.WithContext(ctx).Select("id", "task_type", "payload", "queue", "enqueued_at").
		Where("enqueued_at IS NOT NULL AND enqueued_at < ? AND enqueued_at >= ?", now.Add(-stallAfter), now.Add(-lostWindow)).
		Where(inWindow, args...)
	if c := h.lostAfter; c != nil {
		q = q.Where("(enqueued_at, id) < (?, ?)", c.EnqueuedAt, c.ID) // bounds the index, as pagecursor.Older
	}
	var entries []models.OutboxEntry
	if err := q.Order("enqueued_at DESC, id DESC").Limit(lostBatch).Find(&entries).Error; err != nil {
		return nil, fmt.Errorf("find handed-over outbox entries: %w", err)
	}
	if len(entries) == 0 {
		h.lostAfter = nil // the end of the window: from the newest again next time
	}
	return entries, nil
}

// withinWindows is the condition, and its arguments, that an entry was
// handed over within its type's window at now: one term per type.
func withinWindows(now time.Time) (string, []any) {
	var terms []string
	var args []any
	for _, typ := range lostTypes() {
		terms = append(terms, "(task_type = ? AND enqueued_at >= ?)")
		args = append(args, typ, now.Add(-lostWindows[typ]))
	}
	return strings.Join(terms, " OR "), args
}

// handBackPage hands back those of entries whose work is still to do and
// whose task asynq no longer has.
func (h *rescue) handBackPage(ctx context.Context, entries []models.OutboxEntry) (int, error) {
	db := h.db.WithContext(ctx)
	byType := map[string][]models.OutboxEntry{}
	for _, e := range entries {
		byType[e.TaskType] = append(byType[e.TaskType], e)
	}
	handed := 0
	for typ, es := range byType {
		lost, err := h.lost(ctx, db, typ, es)
		if err != nil {
			return handed, err
		}
		for i, e := range es {
			if !lost[i] {
				continue // work done, or its task waiting, running or retrying
			}
			res := db.Model(&models.OutboxEntry{}).Where("id = ? AND enqueued_at IS NOT NULL", e.ID).
				Updates(map[string]any{"enqueued_at": nil, "last_error": "its task was lost by Redis; handed back to the sweep"})
			if res.Error != nil {
				return handed, fmt.Errorf("hand back outbox entry %s: %w", e.ID, res.Error)
			}
			handed += int(res.RowsAffected)
		}
	}
	return handed, nil
}

// lost says which of es, entries of typ's tasks, have work still to do
// and no task for it in asynq.
func (h *rescue) lost(ctx context.Context, db *gorm.DB, typ string, es []models.OutboxEntry) ([]bool, error) {
	if typ == tasks.TypeWebhookFanOut {
		return h.fanOutsLost(ctx, db, es)
	}
	payloads := make([][]byte, len(es))
	for i, e := range es {
		payloads[i] = e.Payload
	}
	todo, err := stillToDo[typ](db, payloads)
	if err != nil {
		return nil, fmt.Errorf("is the work of %s tasks still to do: %w", typ, err)
	}
	lost := make([]bool, len(es))
	for i, e := range es {
		if !todo[i] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if lost[i], err = h.taskLost(e.Queue, e.ID); err != nil {
			return nil, err
		}
	}
	return lost, nil
}

// fanOutsLost says which of es, fan-out entries, have a pending delivery
// whose task asynq lost while the fan-out's own task, which would enqueue
// it, is gone too. Handed back, the fan-out runs again and enqueues the
// missing tasks (webhook.Service.FanOut). A delivery whose task is gone
// is asked about again after the look-up: one that settled meanwhile
// took its finished task with it, and is not lost.
func (h *rescue) fanOutsLost(ctx context.Context, db *gorm.DB, es []models.OutboxEntry) ([]bool, error) {
	ids := make([][]string, len(es))
	var all []string
	for i, e := range es {
		var p tasks.WebhookFanOutPayload
		if json.Unmarshal(e.Payload, &p) == nil { // not a payload of ours: nothing to rescue
			ids[i] = p.DeliveryIDs
			all = append(all, p.DeliveryIDs...)
		}
	}
	pending, err := pendingSet(db, all)
	if err != nil {
		return nil, err
	}
	queue := tasks.SpecOf(tasks.TypeWebhookDeliver).Queue
	lost := make([]bool, len(es))
	for i, e := range es {
		waiting := slices.DeleteFunc(ids[i], func(id string) bool { return !pending[id] })
		if len(waiting) == 0 {
			continue
		}
		gone, err := h.taskLost(e.Queue, e.ID)
		if err != nil {
			return nil, err
		}
		if !gone {
			continue // the fan-out, waiting, running or retrying, enqueues them itself
		}
		var without []string // each looked at: an archived task is freed for the fan-out
		for _, id := range waiting {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			gone, err := h.taskLost(queue, id)
			if err != nil {
				return nil, err
			}
			if gone {
				without = append(without, id)
			}
		}
		still, err := pendingSet(db, without)
		if err != nil {
			return nil, err
		}
		lost[i] = len(still) > 0
	}
	return lost, nil
}

// pendingSet is the set of those of the deliveries ids that are pending.
func pendingSet(db *gorm.DB, ids []string) (map[string]bool, error) {
	pending := map[string]bool{}
	for chunk := range slices.Chunk(ids, fanOutLookup) {
		found, err := webhook.PendingOf(db, chunk)
		if err != nil {
			return nil, err
		}
		for _, id := range found {
			pending[id] = true
		}
	}
	return pending, nil
}

// fanOutLookup caps the ids of one query of fanOutsLost, well below
// Postgres's 65,535 parameters.
const fanOutLookup = 5000

// taskLost reports whether asynq has task id in queue neither waiting,
// running nor retrying; an archived or completed one is deleted, so that
// it can be enqueued again under its id.
func (h *rescue) taskLost(queue, id string) (bool, error) {
	info, err := h.inspector.GetTaskInfo(queue, id)
	switch {
	case errors.Is(err, asynq.ErrTaskNotFound), errors.Is(err, asynq.ErrQueueNotFound):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("look up task %s: %w", id, err)
	case info.State != asynq.TaskStateArchived && info.State != asynq.TaskStateCompleted:
		return false, nil
	}
	if err := h.inspector.DeleteTask(queue, id); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
		return false, fmt.Errorf("free task id %s: %w", id, err)
	}
	return true, nil
}
