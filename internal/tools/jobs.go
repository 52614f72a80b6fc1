package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/requestid"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// JobRetention is how long an async job and its result are kept.
const JobRetention = 24 * time.Hour

// JobPrefix starts the opaque ids of tool jobs.
const JobPrefix = "job_"

// Jobs are the async tools' jobs of one database: queued by the API,
// run by the worker (its tool:run task), polled by their callers.
type Jobs struct {
	db     *gorm.DB
	outbox *outbox.Outbox
	now    func() time.Time
}

// NewJobs returns the jobs of db, queued through ob.
func NewJobs(db *gorm.DB, ob *outbox.Outbox, now func() time.Time) *Jobs {
	return &Jobs{db: db, outbox: ob, now: now}
}

// Queue writes a queued job of tool slug on a canonical input (what the
// tool's Parse returned) and its task, in one transaction.
func (j *Jobs) Queue(ctx context.Context, slug string, input json.RawMessage) (models.ToolJob, error) {
	now := j.now().UTC()
	job := models.ToolJob{ID: secret.NewID(JobPrefix), Tool: slug, Input: input, State: models.JobQueued,
		RequestID: requestid.From(ctx), CreatedAt: now, ExpiresAt: now.Add(JobRetention)}
	err := j.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		if err := tx.Create(&job).Error; err != nil {
			return err
		}
		tx.Add(tasks.ToolRunPayload{JobID: job.ID})
		return nil
	})
	if err != nil {
		return job, fmt.Errorf("queue %s job: %w", slug, err)
	}
	return job, nil
}

// Get returns tool slug's job id as its task recorded it: a validation
// error for an id that is not a job's, not_found for an unknown or
// expired one, or another tool's.
func (j *Jobs) Get(ctx context.Context, slug, id string) (models.ToolJob, error) {
	var job models.ToolJob
	if !secret.IsID(id, JobPrefix) {
		return job, fault.Invalid("jobId", "%q is not a job id", id)
	}
	err := j.db.WithContext(ctx).Take(&job, "id = ? AND tool = ? AND expires_at > ?", id, slug, j.now().UTC()).Error
	return job, models.FoundOr(err, "job "+id, "no %s job %s (jobs are kept %s)", slug, id, ratelimit.DescribeDuration(JobRetention))
}
