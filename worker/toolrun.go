package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/internal/tools"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// toolRun runs an async tool job and records what happens to it: running
// with its progress, then done with the result or failed with an error a
// person can read. A job with its final state is left alone, so a task
// that runs twice changes nothing; a job whose worker died is run again
// from the start (tools only read).
type toolRun struct {
	db    *gorm.DB
	tools *tools.Registry
}

func (h *toolRun) Work(ctx context.Context, p tasks.ToolRunPayload) error {
	db := h.db.WithContext(ctx)
	job, err := loadRow[models.ToolJob](db, "job", p.JobID)
	if err != nil {
		return err
	}
	if job.Terminal() {
		tasks.FoundDone(ctx)
		return nil
	}
	tool, ok := h.tools.Get(job.Tool)
	if !ok {
		return h.finish(ctx, job.ID, nil, fmt.Sprintf("the tool %q is no longer offered", job.Tool), asynq.SkipRetry)
	}
	now := time.Now().UTC()
	err = db.Model(&models.ToolJob{}).Where("id = ? AND state IN ?", job.ID, []string{models.JobQueued, models.JobRunning}).
		Updates(map[string]any{"state": models.JobRunning, "started_at": now, "done": 0, "attempts": gorm.Expr("attempts + 1")}).Error
	if err != nil {
		return fmt.Errorf("start job %s: %w", job.ID, err)
	}
	progress := func(done, planned int) {
		// Progress is advice: a failed write is not worth failing the job for.
		db.Model(&models.ToolJob{}).Where("id = ? AND state = ?", job.ID, models.JobRunning).
			Updates(map[string]any{"done": done, "planned": planned})
	}
	result, err := tool.Run(ctx, job.Input, progress)
	var blocked *fetch.BlockedError
	switch {
	case err == nil:
		b, err := json.Marshal(result)
		if err != nil {
			return h.finish(ctx, job.ID, nil, "the result could not be encoded", asynq.SkipRetry)
		}
		return h.finish(ctx, job.ID, b, "", nil)
	case errors.As(err, &blocked):
		return h.finish(ctx, job.ID, nil, blocked.Error(), asynq.SkipRetry)
	case lastAttempt(ctx):
		retried, _ := asynq.GetRetryCount(ctx)
		why := fmt.Sprintf("%s failed after %d attempts: %s", job.Tool, retried+1, models.ErrorText(err, 400))
		return h.finish(context.WithoutCancel(ctx), job.ID, nil, why, asynq.SkipRetry)
	}
	return err
}

// finish records the job's final state (result or error) once; cause, when
// not nil, is returned so asynq files the task as failed. why is cut to
// the error column's 500 bytes: a refusal names the URL it refused, which
// may be four times as long, and a write that fails would leave the job
// running.
func (h *toolRun) finish(ctx context.Context, id string, result json.RawMessage, why string, cause error) error {
	state := models.JobDone
	if why != "" {
		state = models.JobFailed
	}
	updates := map[string]any{"state": state, "error": models.Cut(why, 500), "finished_at": time.Now().UTC()}
	if result != nil {
		updates["result"] = result
	}
	if err := h.db.WithContext(ctx).Model(&models.ToolJob{}).Where("id = ? AND state IN ?", id, []string{models.JobQueued, models.JobRunning}).
		Updates(updates).Error; err != nil {
		return fmt.Errorf("finish job %s: %w", id, err)
	}
	if why != "" {
		return fmt.Errorf("job %s: %s: %w", id, why, cause)
	}
	return nil
}
