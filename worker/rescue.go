package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
// outbox. Work stalls when its task is gone: a Redis without persistence
// that restarted while the worker running the task died, or a task that
// ran out of retries while the database was down. Work whose task is still
// in asynq (pending, running, waiting for a retry) or still in the outbox
// is left alone.
type rescue struct {
	db        *gorm.DB
	outbox    *outbox.Outbox
	inspector *asynq.Inspector
	log       *slog.Logger
}

func (h *rescue) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	now := time.Now().UTC()
	cutoff := now.Add(-stallAfter)
	db := h.db.WithContext(ctx)

	moving := db.Model(&models.BulkItem{}).Select("1").Where("bulk_items.bulk_op_id = bulk_ops.id AND finished_at > ?", cutoff)
	var ops []models.BulkOp
	err := db.Select("id", "attempts").
		Where("state IN ? AND COALESCE(rescued_at, started_at, created_at) < ? AND NOT EXISTS (?)", []string{models.BulkQueued, models.BulkRunning}, cutoff, moving).
		Order("created_at").Limit(rescueBatch).Find(&ops).Error
	if err != nil {
		return fmt.Errorf("find stalled bulk ops: %w", err)
	}
	var jobs []models.ToolJob
	err = db.Select("id", "attempts").
		Where("state IN ? AND COALESCE(rescued_at, started_at, created_at) < ?", []string{models.JobQueued, models.JobRunning}, cutoff).
		Order("created_at").Limit(rescueBatch).Find(&jobs).Error
	if err != nil {
		return fmt.Errorf("find stalled tool jobs: %w", err)
	}

	counts := map[string]int{}
	for _, op := range ops {
		task, _ := tasks.NewBulkRunTask(op.ID)
		var giveUp func(tx *gorm.DB) error
		if op.Attempts >= maxBulkAttempts {
			giveUp = func(tx *gorm.DB) error {
				return finishBulk(tx, op.ID, models.BulkFailed, fmt.Sprintf("bulk op "+gaveUpFmt, op.Attempts), now)
			}
		}
		outcome, err := h.rescueOne(ctx, task, &models.BulkOp{ID: op.ID}, giveUp, now)
		if err != nil {
			return err
		}
		counts[outcome]++
	}
	for _, job := range jobs {
		task, _ := tasks.NewToolRunTask(job.ID)
		var giveUp func(tx *gorm.DB) error
		if job.Attempts >= maxJobAttempts {
			giveUp = func(tx *gorm.DB) error {
				return tx.Model(&models.ToolJob{}).Where("id = ? AND state IN ?", job.ID, []string{models.JobQueued, models.JobRunning}).
					Updates(map[string]any{"state": models.JobFailed, "error": fmt.Sprintf("the job "+gaveUpFmt, job.Attempts), "finished_at": now}).Error
			}
		}
		outcome, err := h.rescueOne(ctx, task, &models.ToolJob{ID: job.ID}, giveUp, now)
		if err != nil {
			return err
		}
		counts[outcome]++
	}
	if counts["rescued"]+counts["failed"] > 0 {
		h.log.WarnContext(ctx, "rescued stalled work", "rescued", counts["rescued"], "failed", counts["failed"])
	}
	return nil
}

// rescueOne gives row, the work of task, a new task, or gives it up when
// giveUp is set, unless a task for it is still queued. It returns what it
// did: "rescued", "failed", or "" (left alone).
func (h *rescue) rescueOne(ctx context.Context, task *asynq.Task, row any, giveUp func(tx *gorm.DB) error, now time.Time) (string, error) {
	alive, err := h.queued(ctx, task)
	if err != nil || alive {
		return "", err
	}
	outcome := "rescued"
	err = h.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		if giveUp != nil {
			outcome = "failed"
			return giveUp(tx.DB)
		}
		if err := tx.Model(row).Update("rescued_at", now).Error; err != nil {
			return err
		}
		return tx.Add(task)
	})
	if err != nil {
		return "", fmt.Errorf("rescue %s %s: %w", task.Type(), task.Payload(), err)
	}
	return outcome, nil
}

// queued reports whether a task like t still waits in the outbox or in
// asynq (pending, running, scheduled or waiting for a retry).
func (h *rescue) queued(ctx context.Context, t *asynq.Task) (bool, error) {
	var entries []models.OutboxEntry
	if err := h.db.WithContext(ctx).Select("id", "queue", "enqueued_at").
		Where("task_type = ? AND payload = ?", t.Type(), t.Payload()).Find(&entries).Error; err != nil {
		return false, fmt.Errorf("find the tasks of %s: %w", t.Payload(), err)
	}
	for _, e := range entries {
		if e.EnqueuedAt == nil {
			return true, nil // the sweep enqueues it
		}
		info, err := h.inspector.GetTaskInfo(e.Queue, e.ID)
		switch {
		case errors.Is(err, asynq.ErrTaskNotFound), errors.Is(err, asynq.ErrQueueNotFound):
			continue
		case err != nil:
			return false, fmt.Errorf("look up task %s: %w", e.ID, err)
		case info.State != asynq.TaskStateArchived && info.State != asynq.TaskStateCompleted:
			return true, nil
		}
	}
	return false, nil
}
