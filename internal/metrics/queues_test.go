package metrics_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/domaind/domaind/internal/metrics"
	"github.com/domaind/domaind/internal/platform/platformtest"
)

func TestQueueCollectorExportsQueueState(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	client := asynq.NewClientFromRedisClient(r.Client)
	for range 3 {
		if _, err := client.EnqueueContext(context.Background(), asynq.NewTask("t:x", nil), asynq.Queue("tools")); err != nil {
			t.Fatal(err)
		}
	}
	m := metrics.New()
	m.RegisterQueues(asynq.NewInspectorFromRedisClient(r.Client))
	want := `
# HELP domaind_queue_tasks Tasks in the queue by state.
# TYPE domaind_queue_tasks gauge
domaind_queue_tasks{queue="tools",state="active"} 0
domaind_queue_tasks{queue="tools",state="archived"} 0
domaind_queue_tasks{queue="tools",state="completed"} 0
domaind_queue_tasks{queue="tools",state="pending"} 3
domaind_queue_tasks{queue="tools",state="retry"} 0
domaind_queue_tasks{queue="tools",state="scheduled"} 0
# HELP domaind_queue_scrape_error 1 when the queue state could not be read from Redis.
# TYPE domaind_queue_scrape_error gauge
domaind_queue_scrape_error 0
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "domaind_queue_tasks", "domaind_queue_scrape_error"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.Registry, "domaind_queue_latency_seconds", "domaind_queue_processed_total", "domaind_queue_failed_total", "domaind_queue_paused"); n != 4 {
		t.Errorf("per-queue series = %d, want 4", n)
	}
	// asynq's own exporter names, beside ours.
	asynqWant := `
# HELP asynq_queue_size Number of tasks in a queue
# TYPE asynq_queue_size gauge
asynq_queue_size{queue="tools"} 3
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(asynqWant), "asynq_queue_size"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.Registry, "asynq_tasks_enqueued_total", "asynq_tasks_processed_total", "asynq_tasks_failed_total",
		"asynq_queue_latency_seconds", "asynq_queue_paused_total"); n < 5 {
		t.Errorf("asynq exporter series = %d, want at least 5", n)
	}
}

// Decisions taken without a backing service are counted by what took them.
func TestDegradedIsCountedByWhat(t *testing.T) {
	m := metrics.New()
	m.Degraded("registry_budget")
	m.Degraded("registry_budget")
	want := `
# HELP domaind_degraded_total Decisions taken without a backing service, by what decided (registry_budget: a registry query allowed or refused by the process's own share while Redis could not count).
# TYPE domaind_degraded_total counter
domaind_degraded_total{what="registry_budget"} 2
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "domaind_degraded_total"); err != nil {
		t.Error(err)
	}
}
