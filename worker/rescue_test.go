package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

func TestRescueGivesWorkWhoseTaskIsGoneANewOne(t *testing.T) {
	t.Parallel()
	db, r, ob := newRescueDeps(t)
	client := asynq.NewClientFromRedisClient(r.Client)
	inspector := asynq.NewInspectorFromRedisClient(r.Client)
	now := time.Now().UTC()
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }

	ops := []models.BulkOp{
		{ID: "bop_lost", State: models.BulkRunning, CreatedAt: *ago(time.Hour), StartedAt: ago(5 * time.Minute)},
		{ID: "bop_pending", State: models.BulkQueued, CreatedAt: *ago(5 * time.Minute)},   // its task waits in asynq
		{ID: "bop_outbox", State: models.BulkQueued, CreatedAt: *ago(5 * time.Minute)},    // its task waits in the outbox
		{ID: "bop_archived", State: models.BulkRunning, CreatedAt: *ago(5 * time.Minute)}, // its task ran out of retries
		{ID: "bop_moving", State: models.BulkRunning, CreatedAt: *ago(time.Hour)},         // an item finished just now
		{ID: "bop_fresh", State: models.BulkQueued, CreatedAt: *ago(10 * time.Second)},
		{ID: "bop_done", State: models.BulkDone, CreatedAt: *ago(time.Hour)},
		{ID: "bop_worn", State: models.BulkRunning, CreatedAt: *ago(time.Hour), Attempts: maxBulkAttempts},
	}
	for i := range ops {
		ops[i].UserID, ops[i].Op = "u", "lock"
	}
	db.Create(&ops)
	db.Create(&[]models.BulkItem{
		{ID: "i1", BulkOpID: "bop_moving", Domain: "a.com", State: models.ItemDone, FinishedAt: ago(10 * time.Second)},
		{ID: "i2", BulkOpID: "bop_moving", Domain: "b.com", State: models.ItemPending},
		{ID: "i3", BulkOpID: "bop_worn", Domain: "c.com", State: models.ItemPending},
	})
	// Tasks of the ops that still have one, as the outbox made them.
	for _, q := range []struct {
		op       string
		enqueued bool
	}{{"bop_pending", true}, {"bop_outbox", false}, {"bop_archived", true}} {
		task := tasks.New(tasks.BulkRunPayload{BulkOpID: q.op})
		e := models.OutboxEntry{ID: models.NewID(), TaskType: task.Type(), Payload: task.Payload(), Queue: tasks.QueueBulk, CreatedAt: *ago(5 * time.Minute)}
		if q.enqueued {
			e.EnqueuedAt = ago(5 * time.Minute)
			if _, err := client.Enqueue(task, asynq.Queue(tasks.QueueBulk), asynq.TaskID(e.ID)); err != nil {
				t.Fatal(err)
			}
		}
		db.Create(&e)
		if q.op == "bop_archived" {
			if err := inspector.ArchiveTask(tasks.QueueBulk, e.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	jobs := []models.ToolJob{
		{ID: "job_lost", State: models.JobRunning, Attempts: 1, CreatedAt: *ago(time.Hour), StartedAt: ago(5 * time.Minute)},
		{ID: "job_worn", State: models.JobRunning, Attempts: maxJobAttempts, CreatedAt: *ago(time.Hour)},
		{ID: "job_young", State: models.JobQueued, CreatedAt: *ago(10 * time.Second)},
		{ID: "job_done", State: models.JobDone, Attempts: 1, CreatedAt: *ago(time.Hour)},
	}
	for i := range jobs {
		jobs[i].Tool, jobs[i].Input, jobs[i].ExpiresAt = "seo-crawl", json.RawMessage(`{}`), now.Add(time.Hour)
	}
	db.Create(&jobs)

	h := &rescue{db: db, outbox: ob, inspector: inspector, log: quiet}
	for range 2 { // the second run finds the new tasks queued
		if err := run(context.Background(), h, tasks.New(tasks.JobsRescuePayload{})); err != nil {
			t.Fatal(err)
		}
	}
	var rescued []string
	var entries []models.OutboxEntry
	db.Where("created_at > ?", now.Add(-time.Second)).Order("task_type, payload").Find(&entries)
	for _, e := range entries {
		rescued = append(rescued, e.TaskType+" "+string(e.Payload))
	}
	want := []string{`bulk:run {"bulk_op_id":"bop_archived"}`, `bulk:run {"bulk_op_id":"bop_lost"}`, `tool:run {"job_id":"job_lost"}`}
	if !slices.Equal(rescued, want) {
		t.Errorf("new tasks = %q, want %q", rescued, want)
	}
	var worn models.ToolJob
	db.First(&worn, "id = ?", "job_worn")
	var wornOp models.BulkOp
	db.First(&wornOp, "id = ?", "bop_worn")
	var skipped int64
	db.Model(&models.BulkItem{}).Where("bulk_op_id = ? AND state = ?", "bop_worn", models.ItemSkipped).Count(&skipped)
	if worn.State != models.JobFailed || worn.Error == "" || wornOp.State != models.BulkFailed || wornOp.Error == "" || skipped != 1 {
		t.Errorf("worn job %s %q, worn op %s %q with %d skipped; want both failed with a reason, the op's item skipped",
			worn.State, worn.Error, wornOp.State, wornOp.Error, skipped)
	}
}

// Work whose tasks still wait, a page of it at the front of a backlog,
// does not hide the work behind it whose task is gone: the next pass goes
// on after that page.
func TestRescueLooksPastABacklogOfLiveWork(t *testing.T) {
	t.Parallel()
	db, r, ob := newRescueDeps(t)
	now := time.Now().UTC()
	var jobs []models.ToolJob
	var entries []models.OutboxEntry
	for i := range rescueBatch {
		job := models.ToolJob{ID: fmt.Sprintf("job_waiting_%03d", i), State: models.JobQueued, CreatedAt: now.Add(-time.Hour).Add(time.Duration(i) * time.Second)}
		jobs = append(jobs, job)
		task := tasks.New(tasks.ToolRunPayload{JobID: job.ID}) // its entry not handed over yet: alive
		entries = append(entries, models.OutboxEntry{ID: models.NewID(), TaskType: task.Type(), Payload: task.Payload(),
			Queue: tasks.SpecOf(task.Type()).Queue, CreatedAt: job.CreatedAt})
	}
	started := now.Add(-10 * time.Minute)
	jobs = append(jobs, models.ToolJob{ID: "job_lost", State: models.JobRunning, Attempts: 1, CreatedAt: now.Add(-30 * time.Minute), StartedAt: &started})
	for i := range jobs {
		jobs[i].Tool, jobs[i].Input, jobs[i].ExpiresAt = "seo-crawl", json.RawMessage(`{}`), now.Add(time.Hour)
	}
	if err := db.CreateInBatches(jobs, 200).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.CreateInBatches(entries, 200).Error; err != nil {
		t.Fatal(err)
	}

	h := &rescue{db: db, outbox: ob, inspector: asynq.NewInspectorFromRedisClient(r.Client), log: quiet}
	lost := tasks.New(tasks.ToolRunPayload{JobID: "job_lost"}).Payload()
	for pass, want := range []int64{0, 1} {
		if err := run(context.Background(), h, tasks.New(tasks.JobsRescuePayload{})); err != nil {
			t.Fatal(err)
		}
		var rescued int64
		db.Model(&models.OutboxEntry{}).Where("payload = ?", lost).Count(&rescued)
		if rescued != want {
			t.Errorf("after pass %d: %d new tasks for the lost job, want %d", pass+1, rescued, want)
		}
	}
}

// Tasks Redis lost while their work is still to do (a FLUSHALL, a restart
// without its data) are handed back to the outbox sweep, which enqueues
// each again under its own id; tasks still in asynq, work done, and
// entries handed over a moment ago are left alone.
func TestRescueHandsTasksRedisLostBackToTheSweep(t *testing.T) {
	t.Parallel()
	db, r, ob := newRescueDeps(t)
	client := asynq.NewClientFromRedisClient(r.Client)
	inspector := asynq.NewInspectorFromRedisClient(r.Client)
	now := time.Now().UTC()
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }

	db.Create(&[]models.WebhookDelivery{
		{ID: "whd_lost", EndpointID: "whe_1", State: models.DeliveryPending},
		{ID: "whd_waiting", EndpointID: "whe_1", State: models.DeliveryPending},
		{ID: "whd_done", EndpointID: "whe_1", State: models.DeliveryDelivered},
		{ID: "whd_fresh", EndpointID: "whe_1", State: models.DeliveryPending},
		{ID: "whd_late", EndpointID: "whe_1", State: models.DeliveryPending},
		{ID: "whd_forgotten", EndpointID: "whe_1", State: models.DeliveryPending},
	})
	db.Create(&[]models.Lookup{
		{ID: "lk_archived", Domain: "example.com", State: models.LookupPending},
		{ID: "lk_old", Domain: "example.org", State: models.LookupPending},
	})
	db.Create(&models.SiteCheck{Domain: "probed.example", Status: models.SiteCheckPending, RequestedAt: now})
	pushed := func(events ...string) int64 { // a push's start step, and the steps it recorded
		start := models.OrderStep{OrderID: "ord_1", At: now, Actor: "ops", Status: models.OrderTransferInProgress, Event: "order.transfer_started"}
		db.Create(&start)
		for _, ev := range events {
			db.Create(&models.OrderStep{OrderID: "ord_1", At: now, Actor: "registry", Status: models.OrderTransferInProgress, Event: ev, PushID: &start.ID})
		}
		return start.ID
	}
	pushAsked, pushDone := pushed(order.EventTransferRequested), pushed(order.EventTransferRequested, order.EventTransferCompleted)
	entry := map[string]models.OutboxEntry{}
	for _, q := range []struct {
		key      string
		payload  tasks.Payload
		handed   time.Duration
		inAsynq  bool
		archived bool
	}{
		{"lost", tasks.WebhookDeliverPayload{DeliveryID: "whd_lost"}, 5 * time.Minute, false, false},
		{"waiting", tasks.WebhookDeliverPayload{DeliveryID: "whd_waiting"}, 5 * time.Minute, true, false},
		{"done", tasks.WebhookDeliverPayload{DeliveryID: "whd_done"}, 5 * time.Minute, false, false},
		{"fresh", tasks.WebhookDeliverPayload{DeliveryID: "whd_fresh"}, 10 * time.Second, false, false},
		// on the third day of its retries
		{"late", tasks.WebhookDeliverPayload{DeliveryID: "whd_late"}, 60 * time.Hour, false, false},
		// past a delivery's window, within the longest (a fan-out's)
		{"forgotten", tasks.WebhookDeliverPayload{DeliveryID: "whd_forgotten"}, lostWindows[tasks.TypeWebhookDeliver] + time.Minute, false, false},
		{"archived", tasks.LookupRunPayload{LookupID: "lk_archived"}, 5 * time.Minute, true, true},
		// younger than a delivery's window, past a lookup's
		{"old lookup", tasks.LookupRunPayload{LookupID: "lk_old"}, lostWindows[tasks.TypeLookupRun] + time.Hour, false, false},
		{"push lost", tasks.TransferPushPayload{OrderID: "ord_1", Push: pushAsked, Recipient: "r"}, 5 * time.Minute, false, false},
		{"push done", tasks.TransferPushPayload{OrderID: "ord_1", Push: pushDone, Recipient: "r"}, 5 * time.Minute, false, false},
		{"probe lost", tasks.BrokerageProbePayload{Domain: "probed.example"}, 5 * time.Minute, false, false},
	} {
		task := tasks.New(q.payload)
		queue := tasks.Specs[task.Type()].Queue
		e := models.OutboxEntry{ID: models.NewID(), TaskType: task.Type(), Payload: task.Payload(), Queue: queue,
			CreatedAt: *ago(q.handed), EnqueuedAt: ago(q.handed)}
		db.Create(&e)
		entry[q.key] = e
		if q.inAsynq {
			if _, err := client.Enqueue(task, asynq.Queue(queue), asynq.TaskID(e.ID)); err != nil {
				t.Fatal(err)
			}
		}
		if q.archived {
			if err := inspector.ArchiveTask(queue, e.ID); err != nil {
				t.Fatal(err)
			}
		}
	}

	h := &rescue{db: db, outbox: ob, inspector: inspector, log: quiet}
	if err := h.Work(context.Background(), tasks.JobsRescuePayload{}); err != nil {
		t.Fatal(err)
	}
	handedBack := map[string]bool{"lost": true, "archived": true, "push lost": true, "probe lost": true, "late": true,
		"waiting": false, "done": false, "fresh": false, "push done": false, "forgotten": false,
		"old lookup": false}
	for key, wantHanded := range handedBack {
		var e models.OutboxEntry
		db.Take(&e, "id = ?", entry[key].ID)
		if handed := e.EnqueuedAt == nil; handed != wantHanded {
			t.Errorf("%s: handed back %v, want %v", key, handed, wantHanded)
		}
	}
	if n, err := ob.Sweep(context.Background(), 0, 100); err != nil || n != 5 {
		t.Fatalf("sweep = %d, %v; want the five handed back enqueued", n, err)
	}
	for _, key := range []string{"lost", "archived", "push lost", "probe lost", "late"} {
		e := entry[key]
		if info, err := inspector.GetTaskInfo(e.Queue, e.ID); err != nil || info.State != asynq.TaskStatePending {
			t.Errorf("%s: task %+v, %v; want it pending again under its own id", key, info, err)
		}
	}
}

// A lost task older than a page of handed-over entries whose work is done
// is still found: handBack pages on, newest first, through the window.
func TestRescueLooksPastTheNewestPage(t *testing.T) {
	t.Parallel()
	db, r, ob := newRescueDeps(t)
	now := time.Now().UTC()
	var deliveries []models.WebhookDelivery
	var entries []models.OutboxEntry
	for i := range lostBatch + 100 {
		id := fmt.Sprintf("whd_done_%d", i)
		state, handed := models.DeliveryDelivered, now.Add(-5*time.Minute).Add(time.Duration(i)*time.Millisecond)
		if i == 0 { // the oldest, behind a page and more of done work
			id, state, handed = "whd_lost", models.DeliveryPending, now.Add(-10*time.Minute)
		}
		deliveries = append(deliveries, models.WebhookDelivery{ID: id, EndpointID: "whe_1", State: state})
		task := tasks.New(tasks.WebhookDeliverPayload{DeliveryID: id})
		entries = append(entries, models.OutboxEntry{ID: models.NewID(), TaskType: task.Type(), Payload: task.Payload(),
			Queue: tasks.QueueWebhooks, CreatedAt: handed, EnqueuedAt: &handed})
	}
	db.CreateInBatches(deliveries, 200)
	db.CreateInBatches(entries, 200)

	h := &rescue{db: db, outbox: ob, inspector: asynq.NewInspectorFromRedisClient(r.Client), log: quiet}
	handed, err := h.handBack(context.Background(), now)
	var lost models.OutboxEntry
	db.Take(&lost, "id = ?", entries[0].ID)
	if err != nil || handed != 1 || lost.EnqueuedAt != nil {
		t.Errorf("handBack = %d, %v, the lost entry enqueued at %v; want it alone handed back", handed, err, lost.EnqueuedAt)
	}
}

// A fan-out's entry stands for its deliveries' tasks: it is handed back
// when one of its deliveries is pending and asynq has neither that
// delivery's task nor the fan-out's, which would enqueue it. Run again,
// the fan-out enqueues just the missing tasks.
func TestRescueHandsBackAFanOutWhoseDeliveryLostItsTask(t *testing.T) {
	t.Parallel()
	db, r, ob := newRescueDeps(t)
	client := asynq.NewClientFromRedisClient(r.Client)
	inspector := asynq.NewInspectorFromRedisClient(r.Client)
	handed := time.Now().UTC().Add(-5 * time.Minute)

	pending := func(ids ...string) []string {
		for _, id := range ids {
			db.Create(&models.WebhookDelivery{ID: id, EndpointID: "whe_1", State: models.DeliveryPending})
		}
		return ids
	}
	db.Create(&models.WebhookDelivery{ID: "whd_sent", EndpointID: "whe_1", State: models.DeliveryDelivered})
	deliver := func(id string) *asynq.Task { return tasks.New(tasks.WebhookDeliverPayload{DeliveryID: id}) }
	entry := map[string]models.OutboxEntry{}
	for _, q := range []struct {
		key        string
		deliveries []string
		// queued: the delivery tasks asynq has (archived: and then archives)
		queued, archived []string
		fanOutQueued     bool
	}{
		{key: "lost", deliveries: append(pending("whd_l1", "whd_l2"), "whd_sent"), queued: []string{"whd_l2"}},
		{key: "all queued", deliveries: pending("whd_q1", "whd_q2"), queued: []string{"whd_q1", "whd_q2"}},
		{key: "all sent", deliveries: []string{"whd_sent"}},
		{key: "fan-out waiting", deliveries: pending("whd_w1"), fanOutQueued: true},
		{key: "archived", deliveries: pending("whd_a1"), queued: []string{"whd_a1"}, archived: []string{"whd_a1"}},
	} {
		task := tasks.New(tasks.WebhookFanOutPayload{DeliveryIDs: q.deliveries})
		e := models.OutboxEntry{ID: models.NewID(), TaskType: task.Type(), Payload: task.Payload(), Queue: tasks.QueueWebhooks,
			CreatedAt: handed, EnqueuedAt: &handed}
		db.Create(&e)
		entry[q.key] = e
		for _, id := range q.queued {
			if _, err := client.Enqueue(deliver(id), asynq.Queue(tasks.QueueWebhooks), asynq.TaskID(id)); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range q.archived {
			if err := inspector.ArchiveTask(tasks.QueueWebhooks, id); err != nil {
				t.Fatal(err)
			}
		}
		if q.fanOutQueued {
			if _, err := client.Enqueue(task, asynq.Queue(tasks.QueueWebhooks), asynq.TaskID(e.ID)); err != nil {
				t.Fatal(err)
			}
		}
	}

	h := &rescue{db: db, outbox: ob, inspector: inspector, log: quiet}
	if n, err := h.handBack(context.Background(), time.Now().UTC()); err != nil || n != 2 {
		t.Fatalf("handBack = %d, %v; want the two fan-outs with a lost delivery task", n, err)
	}
	for key, wantHanded := range map[string]bool{"lost": true, "archived": true, "all queued": false, "all sent": false, "fan-out waiting": false} {
		var e models.OutboxEntry
		db.Take(&e, "id = ?", entry[key].ID)
		if got := e.EnqueuedAt == nil; got != wantHanded {
			t.Errorf("%s: handed back %v, want %v", key, got, wantHanded)
		}
	}
	if _, err := inspector.GetTaskInfo(tasks.QueueWebhooks, "whd_a1"); !errors.Is(err, asynq.ErrTaskNotFound) {
		t.Errorf("the archived delivery task: %v; want it deleted, so that the fan-out can enqueue it again", err)
	}

	// The handed-back fan-outs, run again, enqueue what is missing.
	webhooks := webhook.New(db, []byte("test-secret-key-0123456789abcdef"), nil, time.Now)
	fanOut := &webhookFanOut{webhooks: webhooks, outbox: ob}
	for _, key := range []string{"lost", "archived"} {
		p, err := tasks.Decode[tasks.WebhookFanOutPayload](asynq.NewTask(tasks.TypeWebhookFanOut, entry[key].Payload))
		if err != nil {
			t.Fatal(err)
		}
		if err := fanOut.Work(context.Background(), p); err != nil {
			t.Fatalf("%s: fan-out run again: %v", key, err)
		}
	}
	for _, id := range []string{"whd_l1", "whd_l2", "whd_a1"} {
		if info, err := inspector.GetTaskInfo(tasks.QueueWebhooks, id); err != nil || info.State != asynq.TaskStatePending {
			t.Errorf("delivery %s: task %+v, %v; want it pending under its own id", id, info, err)
		}
	}
	if _, err := inspector.GetTaskInfo(tasks.QueueWebhooks, "whd_sent"); !errors.Is(err, asynq.ErrTaskNotFound) {
		t.Errorf("the delivered delivery: %v; want no task", err)
	}
}

// A pass looks at lostLooks deliveries' worth of fan-outs at most, and
// the next pass goes on from there: fan-outs of a large run cost each
// pass a bounded look, and a lost task behind them is still found.
func TestRescueLooksAtABoundedShareOfFanOuts(t *testing.T) {
	t.Parallel()
	db, r, ob := newRescueDeps(t)
	now := time.Now().UTC()
	big := lostLooks * 2 / 5 // two fit in a pass, not three
	var entries []models.OutboxEntry
	for i := range 4 {
		ids := make([]string, big) // deliveries kept no longer: nothing to do
		for j := range ids {
			ids[j] = fmt.Sprintf("whd_gone_%d_%d", i, j)
		}
		if i == 3 { // the oldest names one pending delivery without a task
			ids = []string{"whd_lost"}
			db.Create(&models.WebhookDelivery{ID: "whd_lost", EndpointID: "whe_1", State: models.DeliveryPending})
		}
		task := tasks.New(tasks.WebhookFanOutPayload{DeliveryIDs: ids})
		handed := now.Add(-5 * time.Minute).Add(-time.Duration(i) * time.Second)
		entries = append(entries, models.OutboxEntry{ID: models.NewID(), TaskType: task.Type(), Payload: task.Payload(),
			Queue: tasks.QueueWebhooks, CreatedAt: handed, EnqueuedAt: &handed})
	}
	db.Create(&entries)

	h := &rescue{db: db, outbox: ob, inspector: asynq.NewInspectorFromRedisClient(r.Client), log: quiet}
	for pass, want := range []int{0, 1} {
		if handed, err := h.handBack(context.Background(), now); err != nil || handed != want {
			t.Errorf("pass %d handed back %d, %v; want %d", pass+1, handed, err, want)
		}
	}
}

// newRescueDeps returns a database, a Redis and an outbox of the test's own.
func newRescueDeps(t *testing.T) (*gorm.DB, *platformtest.Redis, *outbox.Outbox) {
	t.Helper()
	db := modelstest.NewDB(t)
	r := platformtest.NewRedis(t)
	ob := outbox.New(db, r.Client, quiet)
	t.Cleanup(func() { ob.Close() })
	return db, r, ob
}

// The rescue looks for a task as long as asynq can hold it, and not much
// longer: every type it knows has a bounded lifetime, its window holds
// that and a day of queueing (a fan-out's lifetime followed by its
// deliveries'), and the entries are kept longer than the longest window.
func TestLostWindowsOutliveEveryRescuedTask(t *testing.T) {
	for _, typ := range lostTypes() {
		d, ok := lifetime(typ)
		if !ok {
			t.Errorf("%s retries on asynq's default: its lifetime is unknown", typ)
		}
		if w := lostWindows[typ]; d+lostQueueing > w {
			t.Errorf("a %s task can live %v, and wait %v in queues, past its window of %v", typ, d, lostQueueing, w)
		}
	}
	// By hand: the schedule's waits, 75 h 48 min 40 s, stretched by 10 %,
	// and 17 attempts of 30 s.
	if d, _ := lifetime(tasks.TypeWebhookDeliver); d != 83*time.Hour+32*time.Minute+2*time.Second {
		t.Errorf("a delivery's lifetime is %v, want 83h32m2s", d)
	}
	if w := lostWindows[tasks.TypeWebhookFanOut]; w < 108*time.Hour {
		t.Errorf("a fan-out's window is %v, want four and a half days", w)
	}
	if lostWindows[tasks.TypeWebhookDeliver]+time.Minute >= lostWindow {
		t.Errorf("a delivery's window, %v, is not a minute short of the longest, %v: the forgotten delivery's case tests nothing of its own",
			lostWindows[tasks.TypeWebhookDeliver], lostWindow)
	}
	if w := lostWindows[tasks.TypeLookupRun]; w > 25*time.Hour {
		t.Errorf("a lookup's window is %v, want about a day: it lives minutes", w)
	}
	if lostWindow >= outboxRetention {
		t.Errorf("the window of %v reaches past the entries' retention of %v", lostWindow, outboxRetention)
	}
}
