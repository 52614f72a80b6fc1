package worker

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/internal/tools"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

// A crawl refused when it starts ends failed, its refusal naming the start
// URL (up to 2,048 characters) shortened; and any error longer than the
// job's column is cut to fit, on Postgres too, rather than the write
// failing and the job staying running.
func TestARefusedJobWithALongURLEndsFailed(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	start := "http://10.0.0.1/" + strings.Repeat("a", 2000)
	input, _ := json.Marshal(map[string]any{"url": start, "max_pages": 5})
	now := time.Now().UTC()
	job := models.ToolJob{ID: "job_long_refusal", Tool: "seo-crawl", Input: input, State: models.JobQueued, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := db.Create(&job).Error; err != nil {
		t.Fatal(err)
	}
	h := &toolRun{db: db, tools: tools.New(tools.Deps{Fetch: fetch.New(fetch.Options{})})}
	if err := run(context.Background(), h, tasks.New(tasks.ToolRunPayload{JobID: job.ID})); !errors.Is(err, asynq.SkipRetry) {
		t.Errorf("run = %v, want the refusal, not retried", err)
	}
	var got models.ToolJob
	if err := db.Take(&got, "id = ?", job.ID).Error; err != nil {
		t.Fatal(err)
	}
	if got.State != models.JobFailed || got.FinishedAt == nil || len(got.Error) > 500 || !strings.HasPrefix(got.Error, "refused to fetch http://10.0.0.1/aaa") {
		t.Errorf("job = %s, finished %v, error of %d bytes %.60q; want failed with the refusal cut to 500 bytes", got.State, got.FinishedAt, len(got.Error), got.Error)
	}

	long := models.ToolJob{ID: "job_long_error", Tool: "seo-crawl", Input: input, State: models.JobRunning, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := db.Create(&long).Error; err != nil {
		t.Fatal(err)
	}
	if err := h.finish(context.Background(), long.ID, nil, strings.Repeat("é", 600), nil); strings.HasPrefix(err.Error(), "finish job") {
		t.Fatalf("finishing a job with an error of 1,200 bytes: %.100v", err)
	}
	var cut models.ToolJob
	if err := db.Take(&cut, "id = ?", long.ID).Error; err != nil {
		t.Fatal(err)
	}
	if cut.State != models.JobFailed || len(cut.Error) != 500 {
		t.Errorf("job = %s, error of %d bytes; want failed with 500 bytes of it (250 characters)", cut.State, len(cut.Error))
	}
}
