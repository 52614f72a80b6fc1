package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// When unfinished work counts as stalled: no bulk item finished for
// bulkStallAfter, a tool job unfinished jobStallAfter after it was created
// (longer than a crawl may take) or rescued.
const (
	bulkStallAfter = 10 * time.Minute
	jobStallAfter  = 15 * time.Minute
	// rescueAttempts is how many runs a tool job gets before it is failed.
	rescueAttempts = 4
	rescueBatch    = 100
)

// rescue gives stalled bulk ops and tool jobs a new task through the
// outbox. Work stalls when its task is gone: a Redis that lost its data
// (no persistence) while the worker running the task died. A task that
// still exists makes the new one a duplicate, which the handlers allow
// (each item and each job is finished once).
type rescue struct {
	db     *gorm.DB
	outbox *outbox.Outbox
	log    *slog.Logger
}

func (h *rescue) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	now := time.Now().UTC()
	ops, err := h.rescueBulkOps(ctx, now)
	if err != nil {
		return err
	}
	jobs, failed, err := h.rescueJobs(ctx, now)
	if err != nil {
		return err
	}
	if ops+jobs+failed > 0 {
		h.log.WarnContext(ctx, "rescued stalled work", "bulk_ops", ops, "tool_jobs", jobs, "tool_jobs_failed", failed)
	}
	return nil
}

func (h *rescue) rescueBulkOps(ctx context.Context, now time.Time) (int, error) {
	cutoff := now.Add(-bulkStallAfter)
	n := 0
	err := h.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		moving := tx.Model(&models.BulkItem{}).Select("1").Where("bulk_items.bulk_op_id = bulk_ops.id AND finished_at > ?", cutoff)
		var ids []string
		err := tx.Model(&models.BulkOp{}).
			Where("state IN ? AND COALESCE(rescued_at, created_at) < ? AND NOT EXISTS (?)", []string{models.BulkQueued, models.BulkRunning}, cutoff, moving).
			Order("created_at").Limit(rescueBatch).Pluck("id", &ids).Error
		if err != nil || len(ids) == 0 {
			return err
		}
		for _, id := range ids {
			t, err := tasks.NewBulkRunTask(id)
			if err != nil {
				return err
			}
			if err := tx.Add(t); err != nil {
				return err
			}
		}
		n = len(ids)
		return tx.Model(&models.BulkOp{}).Where("id IN ?", ids).Update("rescued_at", now).Error
	})
	if err != nil {
		return 0, fmt.Errorf("rescue bulk ops: %w", err)
	}
	return n, nil
}

func (h *rescue) rescueJobs(ctx context.Context, now time.Time) (rescued, failed int, err error) {
	cutoff := now.Add(-jobStallAfter)
	err = h.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		var jobs []models.ToolJob
		err := tx.Select("id", "tool", "attempts").
			Where("state IN ? AND COALESCE(rescued_at, created_at) < ?", []string{models.JobQueued, models.JobRunning}, cutoff).
			Order("created_at").Limit(rescueBatch).Find(&jobs).Error
		if err != nil {
			return err
		}
		for _, j := range jobs {
			if j.Attempts >= rescueAttempts {
				why := fmt.Sprintf("%s did not finish: its worker stopped %d times", j.Tool, j.Attempts)
				if err := tx.Model(&models.ToolJob{}).Where("id = ? AND state IN ?", j.ID, []string{models.JobQueued, models.JobRunning}).
					Updates(map[string]any{"state": models.JobFailed, "error": why, "finished_at": now}).Error; err != nil {
					return err
				}
				failed++
				continue
			}
			t, err := tasks.NewToolRunTask(j.ID)
			if err != nil {
				return err
			}
			if err := tx.Add(t); err != nil {
				return err
			}
			if err := tx.Model(&models.ToolJob{}).Where("id = ?", j.ID).Update("rescued_at", now).Error; err != nil {
				return err
			}
			rescued++
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("rescue tool jobs: %w", err)
	}
	return rescued, failed, nil
}
