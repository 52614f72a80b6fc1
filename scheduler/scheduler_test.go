package scheduler

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/tasks"
)

func TestTwoSchedulersEnqueueASlotOnce(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := New(asynq.NewClientFromRedisClient(r.Client), log, nil)
	b := New(asynq.NewClientFromRedisClient(r.Client), log, nil)
	e := Entry{Every: 5 * time.Second, Payload: tasks.OutboxSweepPayload{}}
	slot := time.Date(2026, 11, 22, 10, 0, 5, 0, time.UTC)
	ctx := context.Background()
	for _, s := range []*Scheduler{a, b, a} {
		if err := s.Enqueue(ctx, e, slot); err != nil {
			t.Fatalf("enqueue: %v", err)
		}
	}
	if err := b.Enqueue(ctx, e, slot.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	ins := asynq.NewInspectorFromRedisClient(r.Client)
	pending, err := ins.ListPendingTasks(tasks.QueueMaintenance)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, ti := range pending {
		got[ti.ID] = true
	}
	want := []string{"outbox:sweep@2026-11-22T10:00:05Z", "outbox:sweep@2026-11-22T10:00:10Z"}
	if len(pending) != 2 || !got[want[0]] || !got[want[1]] {
		t.Errorf("pending = %v, want exactly %v", got, want)
	}
}

func TestAlignedScheduleAgreesAcrossStartTimes(t *testing.T) {
	every := aligned(Entry{Every: 5 * time.Second})
	for _, start := range []time.Time{
		time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 22, 10, 0, 3, 700, time.UTC),
		time.Date(2026, 11, 22, 10, 0, 4, 999_999_999, time.UTC),
	} {
		if got, want := every.Next(start), time.Date(2026, 11, 22, 10, 0, 5, 0, time.UTC); !got.Equal(want) {
			t.Errorf("Next(%v) = %v, want %v", start, got, want)
		}
	}
}

// An entry with an offset fires that long after each multiple of its
// interval since the epoch: the weekly settlement on Mondays at 03:00 UTC.
func TestOffsetSchedule(t *testing.T) {
	weekly := Entry{Every: 7 * 24 * time.Hour, Offset: 4*24*time.Hour + 3*time.Hour}
	wednesday := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	if got, want := aligned(weekly).Next(wednesday), time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next weekly slot after %v = %v, want Monday %v", wednesday, got, want)
	}
	if got, want := weekly.slot(wednesday), time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("the slot of %v = %v, want %v", wednesday, got, want)
	}
}

func TestTableEntriesHaveSpecs(t *testing.T) {
	for _, e := range Table {
		typ := e.Payload.TaskType()
		if _, ok := tasks.Specs[typ]; !ok {
			t.Errorf("%s has no tasks.Spec", typ)
		}
		if e.Every <= 0 {
			t.Errorf("%s: Every = %v", typ, e.Every)
		}
	}
}

// A scheduler that starts enqueues the slot in progress of every entry (a
// fresh installation syncs TLDs at once); a second one adds nothing.
func TestStartCatchesUpOnTheCurrentSlot(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	table := []Entry{
		{Every: 6 * time.Hour, Payload: tasks.TLDSyncPayload{}},
		{Every: 24 * time.Hour, Payload: tasks.RDAPBootstrapRefreshPayload{}},
	}
	ctx := context.Background()
	for range 2 {
		s := New(asynq.NewClientFromRedisClient(r.Client), log, table)
		s.Start(ctx)
		s.Stop()
	}
	pending, err := asynq.NewInspectorFromRedisClient(r.Client).ListPendingTasks(tasks.QueueMaintenance)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, ti := range pending {
		got[ti.Type]++
	}
	if len(pending) != 2 || got[tasks.TypeTLDSync] != 1 || got[tasks.TypeRDAPBootstrapRefresh] != 1 {
		t.Errorf("pending after two starts = %v, want one of each entry's current slot", got)
	}
}

// A slot's enqueue that Redis refuses (an outage, a failover) is tried
// again within the slot, so the run is not lost to a moment's failure.
func TestAFailedEnqueueIsTriedAgainWithinItsSlot(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	proxy := platformtest.NewProxy(t, r.Server(t).Addr)
	opt := r.Server(t)
	opt.Addr = proxy.Addr
	client := asynq.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	logs := &warnings{}
	s := New(client, slog.New(logs), []Entry{{Every: time.Hour, Payload: tasks.TLDSyncPayload{}}})

	proxy.Stop()
	s.Start(context.Background())
	t.Cleanup(s.Stop)
	testtool.WaitFor(t, "a failed enqueue logged while Redis is away", func() bool {
		return logs.has("periodic enqueue failed; trying again within its slot")
	})
	proxy.Start(t)
	ins := asynq.NewInspectorFromRedisClient(r.Client)
	testtool.WaitFor(t, "the slot's run enqueued once Redis is back", func() bool {
		pending, err := ins.ListPendingTasks(tasks.QueueMaintenance)
		return err == nil && len(pending) == 1 && pending[0].Type == tasks.TypeTLDSync
	})
}

// warnings is a slog handler that keeps the messages of warnings.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, r.Message)
	return nil
}
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

func (w *warnings) has(msg string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Contains(w.msgs, msg)
}
