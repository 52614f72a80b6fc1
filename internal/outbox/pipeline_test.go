package outbox_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

// scriptCounter counts the script calls a client sends alone and in
// pipelines of them.
type scriptCounter struct {
	mu                        sync.Mutex
	alone, pipelines, inPipes int
}

func (c *scriptCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (c *scriptCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if strings.HasPrefix(cmd.Name(), "eval") {
			c.mu.Lock()
			c.alone++
			c.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (c *scriptCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		scripts := 0
		for _, cmd := range cmds {
			if strings.HasPrefix(cmd.Name(), "eval") {
				scripts++
			}
		}
		if scripts > 0 { // not a new connection's set-up
			c.mu.Lock()
			c.pipelines++
			c.inPipes += scripts
			c.mu.Unlock()
		}
		return next(ctx, cmds)
	}
}

func (c *scriptCounter) take() (alone, pipelines, inPipes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	alone, pipelines, inPipes = c.alone, c.pipelines, c.inPipes
	c.alone, c.pipelines, c.inPipes = 0, 0, 0
	return alone, pipelines, inPipes
}

// addCanaries commits n canaries and their tasks in one transaction.
func addCanaries(t *testing.T, ob *outbox.Outbox, n int) {
	t.Helper()
	err := ob.Transaction(context.Background(), func(tx *outbox.Tx) error {
		for range n {
			c := models.Canary{ID: models.NewID(), Steps: 1}
			if err := tx.Create(&c).Error; err != nil {
				return err
			}
			tx.Add(tasks.CanaryRunPayload{CanaryID: c.ID})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The tasks of a transaction leave for Redis in a few pipelines, not a
// round trip each, and each is enqueued once; after Redis lost its
// scripts (a restart), they are enqueued all the same. The test has a
// Redis server of its own: another test's enqueue would load the script
// again between the flush and the pipeline.
func TestATransactionsTasksLeaveInPipelines(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	r := platformtest.NewServerRedis(t)
	rdb := r.Opt.MakeRedisClient().(redis.UniversalClient)
	t.Cleanup(func() { rdb.Close() })
	counter := &scriptCounter{}
	rdb.AddHook(counter)
	ob := outbox.New(db, rdb, quiet)
	addCanaries(t, ob, 1) // loads asynq's script into a Redis that never ran it
	counter.take()

	const n = 300 // three pipelines of at most 128
	addCanaries(t, ob, n)
	alone, pipelines, inPipes := counter.take()
	if alone != 0 || pipelines != 3 || inPipes != n {
		t.Errorf("%d tasks sent %d scripts alone and %d in %d pipelines; want none alone and %d in 3", n, alone, inPipes, pipelines, n)
	}

	if err := r.Client.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	addCanaries(t, ob, 20)
	alone, pipelines, inPipes = counter.take()
	if pipelines != 1 || inPipes != 20 || alone != 20 {
		t.Errorf("after SCRIPT FLUSH 20 tasks sent %d scripts in %d pipelines and %d alone; want 20 refused in one, then 20 alone", inPipes, pipelines, alone)
	}
	ob.Close() // writes the marks

	info, err := asynq.NewInspectorFromRedisClient(r.Client).GetQueueInfo(tasks.QueueMaintenance)
	if err != nil {
		t.Fatal(err)
	}
	var marked int64
	db.Model(&models.OutboxEntry{}).Where("enqueued_at IS NOT NULL").Count(&marked)
	if info.Pending != n+21 || marked != n+21 {
		t.Errorf("%d tasks pending and %d entries marked, want %d of each", info.Pending, marked, n+21)
	}
}

// A task whose id is already in the queue counts as enqueued (asynq
// refused it as a duplicate), and the rest of its pipeline goes in.
func TestAPipelineWithTasksAlreadyQueued(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	r := platformtest.NewRedis(t)
	ob := outbox.New(db, r.Client, quiet)
	t.Cleanup(func() { ob.Close() })
	addCanaries(t, ob, 5)
	ob.Close()
	// The marks are lost, and five more entries wait for the sweep.
	if err := db.Model(&models.OutboxEntry{}).Where("1 = 1").Update("enqueued_at", nil).Error; err != nil {
		t.Fatal(err)
	}
	for range 5 {
		task := tasks.New(tasks.CanaryRunPayload{CanaryID: models.NewID()})
		e := models.OutboxEntry{ID: models.NewID(), TaskType: task.Type(), Payload: task.Payload(), Queue: tasks.QueueMaintenance,
			CreatedAt: time.Now().Add(-time.Minute)}
		if err := db.Create(&e).Error; err != nil {
			t.Fatal(err)
		}
	}
	ob = outbox.New(db, r.Client, quiet)
	n, err := ob.Sweep(context.Background(), 0, 100)
	if err != nil || n != 10 {
		t.Fatalf("sweep = %d, %v; want 10 (five of them duplicates), nil", n, err)
	}
	info, err := asynq.NewInspectorFromRedisClient(r.Client).GetQueueInfo(tasks.QueueMaintenance)
	if err != nil || info.Pending != 10 {
		t.Fatalf("queue = %+v, %v; want 10 pending", info, err)
	}
	var left int64
	db.Model(&models.OutboxEntry{}).Where("enqueued_at IS NULL").Count(&left)
	if left != 0 {
		t.Errorf("%d entries left unmarked, want none", left)
	}
}
