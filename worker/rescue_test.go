package worker

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

func TestRescueGivesStalledWorkANewTask(t *testing.T) {
	db := modelstest.NewDB(t)
	r := platformtest.NewRedis(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ob := outbox.New(db, asynq.NewClientFromRedisClient(r.Client), log)
	t.Cleanup(func() { ob.Close() })
	now := time.Now().UTC()
	ago := func(m int) *time.Time { t := now.Add(-time.Duration(m) * time.Minute); return &t }

	ops := []models.BulkOp{
		{ID: "bop_stalled", State: models.BulkRunning, CreatedAt: *ago(30)}, // last item 15 min ago
		{ID: "bop_moving", State: models.BulkRunning, CreatedAt: *ago(30)},  // an item a minute ago
		{ID: "bop_fresh", State: models.BulkQueued, CreatedAt: *ago(1)},     // just queued
		{ID: "bop_done", State: models.BulkDone, CreatedAt: *ago(30)},       // finished
		{ID: "bop_rescued", State: models.BulkQueued, CreatedAt: *ago(30), RescuedAt: ago(2)},
	}
	for i := range ops {
		ops[i].UserID, ops[i].Op = "u", "lock"
	}
	db.Create(&ops)
	db.Create(&[]models.BulkItem{
		{ID: "i1", BulkOpID: "bop_stalled", Domain: "a.com", State: models.ItemDone, FinishedAt: ago(15)},
		{ID: "i2", BulkOpID: "bop_stalled", Domain: "b.com", State: models.ItemPending},
		{ID: "i3", BulkOpID: "bop_moving", Domain: "c.com", State: models.ItemDone, FinishedAt: ago(1)},
		{ID: "i4", BulkOpID: "bop_moving", Domain: "d.com", State: models.ItemPending},
	})
	jobs := []models.ToolJob{
		{ID: "job_stalled", State: models.JobRunning, Attempts: 1, CreatedAt: *ago(20)},
		{ID: "job_worn", State: models.JobRunning, Attempts: rescueAttempts, CreatedAt: *ago(20)},
		{ID: "job_young", State: models.JobQueued, CreatedAt: *ago(5)},
		{ID: "job_done", State: models.JobDone, Attempts: 1, CreatedAt: *ago(20)},
	}
	for i := range jobs {
		jobs[i].Tool, jobs[i].Input, jobs[i].ExpiresAt = "seo-crawl", json.RawMessage(`{}`), now.Add(time.Hour)
	}
	db.Create(&jobs)

	h := &rescue{db: db, outbox: ob, log: log}
	for range 2 { // the second run finds nothing new to rescue
		if err := h.ProcessTask(context.Background(), tasks.NewJobsRescueTask()); err != nil {
			t.Fatal(err)
		}
	}
	var entries []models.OutboxEntry
	db.Order("task_type").Find(&entries)
	var got []string
	for _, e := range entries {
		got = append(got, e.TaskType+" "+string(e.Payload))
	}
	want := []string{`bulk:run {"bulk_op_id":"bop_stalled"}`, `tool:run {"job_id":"job_stalled"}`}
	if !slices.Equal(got, want) {
		t.Errorf("rescue tasks = %q, want %q", got, want)
	}
	var worn models.ToolJob
	db.First(&worn, "id = ?", "job_worn")
	if worn.State != models.JobFailed || worn.Error == "" || worn.FinishedAt == nil {
		t.Errorf("worn job = %s %q, want failed with a reason", worn.State, worn.Error)
	}
}
