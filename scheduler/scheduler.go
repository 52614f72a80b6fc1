// Package scheduler is the cron table: it enqueues periodic tasks and never
// does their work. Each run is enqueued with a TaskID built from its schedule
// slot, so two schedulers, or a restart inside a slot, enqueue it once.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/robfig/cron/v3"

	"github.com/domaind/domaind/internal/settlement"
	"github.com/domaind/domaind/tasks"
)

// Entry is one line of the table: every Every, Offset after each multiple
// of Every since the Unix epoch (so every scheduler agrees on the slots),
// enqueue the task of Payload.
type Entry struct {
	Every   time.Duration
	Offset  time.Duration
	Payload tasks.Payload
}

// slot is the start of e's slot that now falls in.
func (e Entry) slot(now time.Time) time.Time {
	n, every := now.UnixNano()-int64(e.Offset), int64(e.Every)
	start := n - n%every
	if n%every < 0 {
		start -= every
	}
	return time.Unix(0, start+int64(e.Offset)).UTC()
}

// Table is the schedule of the service.
var Table = []Entry{
	{Every: 5 * time.Second, Payload: tasks.OutboxSweepPayload{}},
	{Every: 10 * time.Second, Payload: tasks.PaymentReconcilePayload{}},
	{Every: time.Minute, Payload: tasks.JobsRescuePayload{}},
	{Every: time.Hour, Payload: tasks.MaintenanceCleanupPayload{}},
	{Every: time.Hour, Offset: settlement.RollupGrace, Payload: tasks.LedgerRollupPayload{}},
	{Every: 6 * time.Hour, Payload: tasks.TLDSyncPayload{}},
	{Every: 24 * time.Hour, Payload: tasks.RDAPBootstrapRefreshPayload{}},
}

// Scheduler runs a table with robfig/cron.
type Scheduler struct {
	cron     *cron.Cron
	client   *asynq.Client
	log      *slog.Logger
	table    []Entry
	stopping chan struct{}
	running  sync.WaitGroup
}

// RetryPause is the wait before a periodic enqueue that failed (Redis
// away, a failover under way) is tried again within its slot.
const RetryPause = 500 * time.Millisecond

// New returns a scheduler for table that enqueues through client.
func New(client *asynq.Client, log *slog.Logger, table []Entry) *Scheduler {
	s := &Scheduler{cron: cron.New(cron.WithLocation(time.UTC)), client: client, log: log, table: table, stopping: make(chan struct{})}
	for _, e := range table {
		s.cron.Schedule(aligned(e), cron.FuncJob(func() {
			s.running.Add(1)
			s.enqueueSlot(e, e.slot(time.Now()))
		}))
	}
	return s
}

// Start enqueues the current slot of every entry, then runs the table in the
// background. The first enqueue catches up on a slot that began while no
// scheduler ran (a fresh installation gets its first TLD sync at once, not
// hours later); where a scheduler did run it, the slot's TaskID makes it a
// no-op.
func (s *Scheduler) Start(ctx context.Context) {
	now := time.Now().UTC()
	for _, e := range s.table {
		s.running.Add(1)
		go s.enqueueSlot(e, e.slot(now))
	}
	s.cron.Start()
}

// Stop stops the table, ends the retries of failed enqueues, and waits
// for a running enqueue to finish.
func (s *Scheduler) Stop() {
	close(s.stopping)
	<-s.cron.Stop().Done()
	s.running.Wait()
}

// enqueueSlot enqueues the run of e for slot, and while Redis refuses,
// tries again every RetryPause until the slot is over or the scheduler
// stops: a failover of a few seconds does not cost the slot its run.
func (s *Scheduler) enqueueSlot(e Entry, slot time.Time) {
	defer s.running.Done()
	for attempt := 1; ; attempt++ {
		err := s.Enqueue(context.Background(), e, slot)
		if err == nil {
			return
		}
		if attempt == 1 {
			s.log.Warn("periodic enqueue failed; trying again within its slot", "err", err)
		}
		if !time.Now().Add(RetryPause).Before(slot.Add(e.Every)) {
			s.log.Warn("periodic enqueue failed for its whole slot; the next slot will run", "err", err, "attempts", attempt)
			return
		}
		select {
		case <-s.stopping:
			return
		case <-time.After(RetryPause):
		}
	}
}

// Enqueue enqueues the run of e for slot. A run another scheduler already
// enqueued for the same slot is not an error.
func (s *Scheduler) Enqueue(ctx context.Context, e Entry, slot time.Time) error {
	t := tasks.New(e.Payload)
	id := SlotTaskID(t.Type(), slot)
	retention := max(2*e.Every, time.Minute)
	opts := append(tasks.Options(t.Type()), asynq.TaskID(id), asynq.Retention(retention), asynq.Deadline(slot.Add(e.Every+time.Minute)))
	_, err := s.client.EnqueueContext(ctx, t, opts...)
	switch {
	case errors.Is(err, asynq.ErrTaskIDConflict):
		s.log.DebugContext(ctx, "periodic task already enqueued", "task_id", id)
		return nil
	case err != nil:
		return fmt.Errorf("enqueue %s: %w", id, err)
	}
	s.log.DebugContext(ctx, "periodic task enqueued", "task_id", id)
	return nil
}

// SlotTaskID is the TaskID of the run of typ for slot, e.g. "outbox:sweep@2026-11-22T10:00:05Z".
func SlotTaskID(typ string, slot time.Time) string {
	return typ + "@" + slot.UTC().Format(time.RFC3339)
}

// SlotOf returns the slot of a TaskID made by SlotTaskID, and false for
// any other.
func SlotOf(id string) (time.Time, bool) {
	_, at, ok := strings.Cut(id, "@")
	if !ok {
		return time.Time{}, false
	}
	slot, err := time.Parse(time.RFC3339, at)
	return slot, err == nil
}

// aligned fires at the start of every slot of an entry.
type aligned Entry

func (a aligned) Next(t time.Time) time.Time { return Entry(a).slot(t).Add(a.Every) }
