package worker

import (
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/period"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/settlement"
	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/scheduler"
	"github.com/domaind/domaind/tasks"
)

// The scheduler's settlement task asks for the period that had closed
// when its slot began, even when it runs late, after the next period has
// closed too: asked for the period closed last at its run, it took the
// next period's run, and its own period was never asked for.
func TestScheduledSettlementAsksForItsSlotsPeriod(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	r := platformtest.NewRedis(t)
	ob := outbox.New(db, r.Client, quiet)
	t.Cleanup(func() { ob.Close() })
	length, err := period.ParseLength("15m")
	if err != nil {
		t.Fatal(err)
	}
	settlements := settlement.New(db, ob, nil, length, []byte("test-secret-key-0123456789abcdef"), time.Now)

	every, offset := length.Schedule()
	slot := length.Of(time.Now()).Start.Add(-2 * every).Add(offset) // two periods ago
	mux := asynq.NewServeMux()
	Handle(mux, &settlementSchedule{settlements: settlements})
	srv := asynq.NewServer(r.Opt, asynq.Config{Concurrency: 1, Queues: map[string]int{tasks.QueueSettlement: 1}, LogLevel: asynq.FatalLevel})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	client := asynq.NewClientFromRedisClient(r.Client)
	task := tasks.New(tasks.SettlementSchedulePayload{})
	if _, err := client.Enqueue(task, append(tasks.Options(task.Type()), asynq.TaskID(scheduler.SlotTaskID(task.Type(), slot)))...); err != nil {
		t.Fatal(err)
	}

	var runs []models.SettlementRun
	testtool.WaitFor(t, "the slot's run is asked for", func() bool {
		return db.Find(&runs).Error == nil && len(runs) > 0
	})
	want := length.Closed(slot).Start
	if len(runs) != 1 || !runs[0].PeriodStart.Equal(want) {
		t.Errorf("runs asked for the periods starting %v, want the one of the slot %v alone: %v", starts(runs), slot, want)
	}
}

func starts(runs []models.SettlementRun) []time.Time {
	var out []time.Time
	for _, r := range runs {
		out = append(out, r.PeriodStart)
	}
	return out
}
