package outbox_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/requestid"
	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// addCanary commits a canary row and its task through ob.
func addCanary(t *testing.T, ctx context.Context, ob *outbox.Outbox) models.Canary {
	t.Helper()
	c := models.Canary{ID: models.NewID(), Steps: 1}
	err := ob.Transaction(ctx, func(tx *outbox.Tx) error {
		if err := tx.Create(&c).Error; err != nil {
			return err
		}
		tx.Add(tasks.CanaryRunPayload{CanaryID: c.ID})
		return nil
	})
	if err != nil {
		t.Fatalf("transaction: %v", err)
	}
	return c
}

func TestTransactionEnqueuesAfterCommit(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	r := platformtest.NewRedis(t)
	ob := outbox.New(db, r.Client, quiet)
	ctx := requestid.With(context.Background(), "req-1")

	c := addCanary(t, ctx, ob)
	ob.Close() // writes the fast path's marks

	var e models.OutboxEntry
	if err := db.First(&e, "task_type = ?", tasks.TypeCanaryRun).Error; err != nil {
		t.Fatalf("outbox entry: %v", err)
	}
	if e.EnqueuedAt == nil {
		t.Errorf("entry not marked enqueued after the fast path")
	}
	info, err := asynq.NewInspectorFromRedisClient(r.Client).GetTaskInfo(tasks.QueueMaintenance, e.ID)
	if err != nil {
		t.Fatalf("task %s not in queue: %v", e.ID, err)
	}
	p, err := tasks.Decode[tasks.CanaryRunPayload](asynq.NewTask(info.Type, info.Payload))
	if err != nil || p.CanaryID != c.ID {
		t.Errorf("payload = %+v, %v; want canary %s", p, err, c.ID)
	}
	if got := info.Headers[tasks.HeaderRequestID]; got != "req-1" {
		t.Errorf("request id header = %q, want req-1", got)
	}
}

func TestRollbackLeavesNoTask(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	r := platformtest.NewRedis(t)
	ob := outbox.New(db, r.Client, quiet)
	t.Cleanup(func() { ob.Close() })
	boom := errors.New("boom")
	err := ob.Transaction(context.Background(), func(tx *outbox.Tx) error {
		tx.Add(tasks.CanaryRunPayload{CanaryID: "x"})
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	var n int64
	db.Model(&models.OutboxEntry{}).Count(&n)
	if n != 0 {
		t.Errorf("outbox has %d entries after rollback, want 0", n)
	}
	if keys := r.Keys(t, "asynq:{maintenance}:t:*"); len(keys) != 0 {
		t.Errorf("queue has tasks after rollback: %v", keys)
	}
}

func TestSweepDeliversWhatRedisMissed(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	r := platformtest.NewRedis(t)
	opt := r.Server(t)
	proxy := platformtest.NewProxy(t, opt.Addr)
	opt.Addr = proxy.Addr
	viaProxy := opt.MakeRedisClient().(redis.UniversalClient)
	t.Cleanup(func() { viaProxy.Close() })
	ob := outbox.New(db, viaProxy, quiet)
	t.Cleanup(func() { ob.Close() })
	ctx := context.Background()

	proxy.Stop() // Redis is unreachable when the row commits
	addCanary(t, ctx, ob)
	var e models.OutboxEntry
	if err := db.First(&e).Error; err != nil {
		t.Fatal(err)
	}
	if e.EnqueuedAt != nil || e.Attempts != 1 || e.LastError == "" {
		t.Fatalf("entry after failed fast path = enqueued %v attempts %d error %q; want pending, 1 attempt, an error", e.EnqueuedAt, e.Attempts, e.LastError)
	}
	if n, err := ob.Sweep(ctx, 0, 100); err != nil || n != 0 {
		t.Fatalf("sweep while Redis is down = %d, %v; want 0, nil", n, err)
	}

	proxy.Start(t)
	n, err := ob.Sweep(ctx, 0, 100)
	if err != nil || n != 1 {
		t.Fatalf("sweep after Redis is back = %d, %v; want 1, nil", n, err)
	}
	if _, err := asynq.NewInspectorFromRedisClient(r.Client).GetTaskInfo(tasks.QueueMaintenance, e.ID); err != nil {
		t.Errorf("task not in queue after sweep: %v", err)
	}
	if n, _ := ob.Sweep(ctx, 0, 100); n != 0 {
		t.Errorf("second sweep enqueued %d, want 0", n)
	}
}

func TestConcurrentSweepersMakeOneTask(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	r := platformtest.NewRedis(t)
	ctx := context.Background()
	// Entries written without the fast path, as if the process died after commit.
	const entries = 50
	for range entries {
		task := tasks.New(tasks.CanaryRunPayload{CanaryID: models.NewID()})
		e := models.OutboxEntry{ID: models.NewID(), TaskType: task.Type(), Payload: task.Payload(), Queue: tasks.QueueMaintenance}
		if err := db.Create(&e).Error; err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range 2 {
		ob := outbox.New(db, r.Client, quiet)
		t.Cleanup(func() { ob.Close() })
		wg.Go(func() {
			n, err := ob.Sweep(ctx, 0, 100)
			if err != nil {
				t.Errorf("sweep: %v", err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	info, err := asynq.NewInspectorFromRedisClient(r.Client).GetQueueInfo(tasks.QueueMaintenance)
	if err != nil {
		t.Fatal(err)
	}
	if info.Pending != entries {
		t.Errorf("pending tasks = %d, want %d (one per entry)", info.Pending, entries)
	}
	if total < entries {
		t.Errorf("sweepers marked %d entries, want at least %d", total, entries)
	}
	var pending int64
	db.Model(&models.OutboxEntry{}).Where("enqueued_at IS NULL").Count(&pending)
	if pending != 0 {
		t.Errorf("%d entries still pending", pending)
	}
}

// A Redis that accepts connections and never answers holds the fast path
// until the client gives up; the entry still records the failed attempt
// and its error, and stays pending for the sweep.
func TestASilentRedisLeavesTheErrorOnTheEntry(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	// It reads every command and answers none, until the client hangs up.
	addr := testtool.ServeTCP(t, "127.0.0.1:0", func(c net.Conn) { io.Copy(io.Discard, c) })
	// go-redis waits out its read timeout whatever the context says: past
	// the fast path's two seconds.
	silent := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: 3 * time.Second})
	t.Cleanup(func() { silent.Close() })
	ob := outbox.New(db, silent, quiet)
	t.Cleanup(func() { ob.Close() })

	addCanary(t, context.Background(), ob)
	var e models.OutboxEntry
	if err := db.First(&e).Error; err != nil {
		t.Fatal(err)
	}
	if e.EnqueuedAt != nil || e.Attempts != 1 || e.LastError == "" {
		t.Fatalf("entry after a silent Redis = enqueued %v attempts %d error %q; want pending, 1 attempt, the error", e.EnqueuedAt, e.Attempts, e.LastError)
	}
}

// Entries made later have greater ids, so that the entries' primary key
// grows at its right edge (random ids put each entry into a random page
// of it): each of three transactions' entries (which share their
// transaction's time) have greater ids than the transaction's before.
func TestEntryIDsRiseAsTheyAreMade(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	ob := outbox.New(db, platformtest.NewRedis(t).Client, quiet)
	defer ob.Close()
	ctx := context.Background()
	for range 3 {
		err := ob.Transaction(ctx, func(tx *outbox.Tx) error {
			for range 50 {
				tx.Add(tasks.CanaryRunPayload{CanaryID: models.NewID()})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var entries []models.OutboxEntry
	if err := db.Select("id", "created_at").Order("created_at").Find(&entries).Error; err != nil {
		t.Fatal(err)
	}
	var txs [][]string // each transaction's ids, in the order of the transactions
	for i, e := range entries {
		if i == 0 || !e.CreatedAt.Equal(entries[i-1].CreatedAt) {
			txs = append(txs, nil)
		}
		txs[len(txs)-1] = append(txs[len(txs)-1], e.ID)
	}
	if len(txs) != 3 {
		t.Fatalf("the entries have %d times; want one per transaction, 3", len(txs))
	}
	for i := 1; i < len(txs); i++ {
		if last, first := slices.Max(txs[i-1]), slices.Min(txs[i]); first <= last {
			t.Errorf("transaction %d's entries begin at %s, not after %s, the greatest id of the one before", i+1, first, last)
		}
	}
}

// An entry of a task type this version does not know (a newer version
// wrote it, during a rolling deploy) is left pending with the reason, for
// a process that knows it; the sweep goes on with the others.
func TestAnEntryOfAnUnknownTypeWaits(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	r := platformtest.NewRedis(t)
	ob := outbox.New(db, r.Client, quiet)
	t.Cleanup(func() { ob.Close() })
	ctx := context.Background()
	unknown := models.OutboxEntry{ID: "0193a1d2-0000-7000-8000-000000000001", TaskType: "newer:task", Payload: []byte(`{}`),
		Queue: tasks.QueueMaintenance, CreatedAt: time.Now().UTC().Add(-time.Minute)}
	if err := db.Create(&unknown).Error; err != nil {
		t.Fatal(err)
	}
	known := addCanary(t, ctx, ob)
	db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypeCanaryRun).Update("enqueued_at", nil) // as if its mark were lost

	n, err := ob.Sweep(ctx, 0, 100)
	if err != nil || n != 1 {
		t.Fatalf("sweep = %d, %v; want the canary's entry enqueued", n, err)
	}
	var e models.OutboxEntry
	if err := db.First(&e, "id = ?", unknown.ID).Error; err != nil {
		t.Fatal(err)
	}
	if e.EnqueuedAt != nil || e.Attempts != 1 || e.LastError != `task type "newer:task" is unknown to this version of domaind` {
		t.Errorf("the unknown entry after the sweep = enqueued %v, attempts %d, error %q; want it pending with the reason", e.EnqueuedAt, e.Attempts, e.LastError)
	}
	if keys := r.Keys(t, "asynq:{maintenance}:t:*"); len(keys) != 1 {
		t.Errorf("tasks in the queue: %v; want the canary's %s alone", keys, known.ID)
	}
}
