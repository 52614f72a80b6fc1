package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// Rescue rules: work is looked at once it has made no progress for
// stallAfter; it is rescued only when no task for it is left, and failed
// once it has used maxJobAttempts or maxBulkAttempts runs.
const (
	stallAfter      = time.Minute
	maxJobAttempts  = 4
	maxBulkAttempts = 30
	rescueBatch     = 100
	gaveUpFmt       = "did not finish: its task stopped %d times"
)

// rescue gives stalled bulk ops and tool jobs a new task through the
// outbox, and hands the other tasks Redis lost back to the outbox sweep
// (handBack). Work stalls when its task is gone: a Redis without
// persistence that restarted while the worker running the task died, or a
// task that ran out of retries while the database was down. Work whose
// task is still in asynq (pending, running, waiting for a retry) or still
// in the outbox is left alone.
type rescue struct {
	db        *gorm.DB
	outbox    *outbox.Outbox
	inspector *asynq.Inspector
	log       *slog.Logger

	lostMu    sync.Mutex
	lostAfter *models.OutboxEntry // where the next pass of handBack goes on

	stallMu    sync.Mutex
	stallAfter map[string]stallAt // by table: where the next pass's read of stalled work goes on
}

// stallAt is a row's place in the order stalled work is read in.
type stallAt struct {
	CreatedAt time.Time
	ID        string
}

// nextStalled reads into rows the next rescueBatch rows q finds in
// (created_at, id) order, going on after the last row the previous pass
// read of table: work whose task is alive at the front of a long backlog
// does not keep the work behind it from being looked at. After a page
// that is not full, the next pass starts from the oldest again.
func nextStalled[R any](h *rescue, q *gorm.DB, table string, rows *[]R, at func(R) stallAt) error {
	h.stallMu.Lock()
	defer h.stallMu.Unlock()
	if c, ok := h.stallAfter[table]; ok {
		q = q.Where("(created_at, id) > (?, ?)", c.CreatedAt, c.ID)
	}
	if err := q.Order("created_at, id").Limit(rescueBatch).Find(rows).Error; err != nil {
		return err
	}
	if len(*rows) < rescueBatch {
		delete(h.stallAfter, table)
		return nil
	}
	if h.stallAfter == nil {
		h.stallAfter = map[string]stallAt{}
	}
	h.stallAfter[table] = at((*rows)[len(*rows)-1])
	return nil
}

func (h *rescue) Work(ctx context.Context, _ tasks.JobsRescuePayload) error {
	now := time.Now().UTC()
	cutoff := now.Add(-stallAfter)
	db := h.db.WithContext(ctx)
	handed, err := h.handBack(ctx, now)
	if err != nil {
		return err
	}
	if handed > 0 {
		h.log.WarnContext(ctx, "handed tasks Redis lost back to the outbox", "entries", handed)
	}

	moving := db.Model(&models.BulkItem{}).Select("1").Where("bulk_items.bulk_op_id = bulk_ops.id AND finished_at > ?", cutoff)
	var ops []models.BulkOp
	err = nextStalled(h, db.Select("id", "attempts", "created_at").
		Where("state IN ? AND COALESCE(rescued_at, started_at, created_at) < ? AND NOT EXISTS (?)", []string{models.BulkQueued, models.BulkRunning}, cutoff, moving),
		"bulk_ops", &ops, func(op models.BulkOp) stallAt { return stallAt{op.CreatedAt, op.ID} })
	if err != nil {
		return fmt.Errorf("find stalled bulk ops: %w", err)
	}
	var jobs []models.ToolJob
	err = nextStalled(h, db.Select("id", "attempts", "created_at").
		Where("state IN ? AND COALESCE(rescued_at, started_at, created_at) < ?", []string{models.JobQueued, models.JobRunning}, cutoff),
		"tool_jobs", &jobs, func(job models.ToolJob) stallAt { return stallAt{job.CreatedAt, job.ID} })
	if err != nil {
		return fmt.Errorf("find stalled tool jobs: %w", err)
	}

	var work []stalled
	for _, op := range ops {
		w := newStalled(tasks.BulkRunPayload{BulkOpID: op.ID}, &models.BulkOp{ID: op.ID}, op.CreatedAt)
		if op.Attempts >= maxBulkAttempts {
			w.giveUp = func(tx *gorm.DB) error {
				return finishBulk(tx, op.ID, models.BulkFailed, fmt.Sprintf("bulk op "+gaveUpFmt, op.Attempts), now)
			}
		}
		work = append(work, w)
	}
	for _, job := range jobs {
		w := newStalled(tasks.ToolRunPayload{JobID: job.ID}, &models.ToolJob{ID: job.ID}, job.CreatedAt)
		if job.Attempts >= maxJobAttempts {
			w.giveUp = func(tx *gorm.DB) error {
				return tx.Model(&models.ToolJob{}).Where("id = ? AND state IN ?", job.ID, []string{models.JobQueued, models.JobRunning}).
					Updates(map[string]any{"state": models.JobFailed, "error": fmt.Sprintf("the job "+gaveUpFmt, job.Attempts), "finished_at": now}).Error
			}
		}
		work = append(work, w)
	}
	if len(work) == 0 {
		return nil
	}
	alive, err := h.queued(ctx, work)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	for _, w := range work {
		if alive[string(w.task.Payload())] {
			continue
		}
		outcome, err := h.rescueOne(ctx, w, now)
		if err != nil {
			return err
		}
		counts[outcome]++
	}
	if len(counts) > 0 {
		h.log.WarnContext(ctx, "rescued stalled work", "rescued", counts["rescued"], "failed", counts["failed"])
	}
	return nil
}

// stalled is work that has not moved: the payload of the task that runs
// it and that task, its row (for rescued_at) and the row's creation, and
// giveUp, set when its runs are used up.
type stalled struct {
	payload tasks.Payload
	task    *asynq.Task
	row     any
	created time.Time
	giveUp  func(tx *gorm.DB) error
}

func newStalled(p tasks.Payload, row any, created time.Time) stalled {
	return stalled{payload: p, task: tasks.New(p), row: row, created: created}
}

// rescueOne gives w a new task, or gives it up when its runs are used up,
// and says which it did ("rescued" or "failed").
func (h *rescue) rescueOne(ctx context.Context, w stalled, now time.Time) (string, error) {
	outcome := "rescued"
	err := h.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		if w.giveUp != nil {
			outcome = "failed"
			return w.giveUp(tx.DB)
		}
		if err := tx.Model(w.row).Update("rescued_at", now).Error; err != nil {
			return err
		}
		tx.Add(w.payload)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("rescue %s %s: %w", w.task.Type(), w.task.Payload(), err)
	}
	return outcome, nil
}

// queued reports, by task payload, which of the work still has a task
// waiting in the outbox or in asynq (pending, running, scheduled or
// waiting for a retry). The outbox is read once for all of it: the
// entries not handed over yet, and those handed over since the oldest of
// the work was made (its first task's entry commits with it), read from
// the outbox's two indexes rather than the whole table.
func (h *rescue) queued(ctx context.Context, work []stalled) (map[string]bool, error) {
	types := map[string]bool{}
	payloads := make([]any, len(work))
	oldest := work[0].created
	for i, w := range work {
		types[w.task.Type()] = true
		payloads[i] = w.task.Payload()
		if w.created.Before(oldest) {
			oldest = w.created
		}
	}
	var entries []models.OutboxEntry
	// stallAfter spares the clocks of the processes that made the work
	// and handed its entry over.
	if err := h.db.WithContext(ctx).Select("id", "queue", "payload", "enqueued_at").
		Where("(enqueued_at IS NULL OR enqueued_at >= ?) AND task_type IN ? AND payload IN ?", oldest.Add(-stallAfter),
			slices.Collect(maps.Keys(types)), payloads).Find(&entries).Error; err != nil {
		return nil, fmt.Errorf("find the tasks of stalled work: %w", err)
	}
	alive := map[string]bool{}
	for _, e := range entries {
		if e.EnqueuedAt == nil {
			alive[string(e.Payload)] = true // the sweep enqueues it
			continue
		}
		info, err := h.inspector.GetTaskInfo(e.Queue, e.ID)
		switch {
		case errors.Is(err, asynq.ErrTaskNotFound), errors.Is(err, asynq.ErrQueueNotFound):
		case err != nil:
			return nil, fmt.Errorf("look up task %s: %w", e.ID, err)
		case info.State != asynq.TaskStateArchived && info.State != asynq.TaskStateCompleted:
			alive[string(e.Payload)] = true
		}
	}
	return alive, nil
}
