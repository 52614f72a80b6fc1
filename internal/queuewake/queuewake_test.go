package queuewake

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/platform/platformtest"
)

// dequeue is the command asynq's server sends to dequeue from queue.
func dequeue(queue string) *redis.Cmd {
	p := "asynq:{" + queue + "}:"
	return redis.NewCmd(context.Background(), "evalsha", "0123abcd", 4, p+"pending", p+"paused", p+"active", p+"lease", 1700000000, p+"t:")
}

// fakeRedis stands for Redis behind the gate: it counts the dequeues that
// reach it, per queue, and answers each queue's with its canned reply.
type fakeRedis struct {
	mu    sync.Mutex
	asked map[string]int
	tasks map[string]bool
	onAsk func(queue string)
}

func (f *fakeRedis) next(_ context.Context, cmd redis.Cmder) error {
	q := dequeuedQueue(cmd)
	f.mu.Lock()
	f.asked[q]++
	has, onAsk := f.tasks[q], f.onAsk
	f.mu.Unlock()
	if onAsk != nil {
		onAsk(q)
	}
	if !has {
		cmd.SetErr(redis.Nil)
		return redis.Nil
	}
	cmd.(*redis.Cmd).SetVal("msg")
	return nil
}

func (f *fakeRedis) setTask(q string, has bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tasks[q] = has
}

func (f *fakeRedis) count(q string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked[q]
}

func newFake() *fakeRedis { return &fakeRedis{asked: map[string]int{}, tasks: map[string]bool{}} }

func TestGateAsksOnlyAboutAnnouncedQueues(t *testing.T) {
	g := NewGate([]string{"a", "b"}, time.Hour)
	f := newFake()
	process := g.Hook().ProcessHook(f.next)
	run := func(q string) error { return process(context.Background(), dequeue(q)) }

	// Nothing known yet: both are asked, and found empty.
	for _, q := range []string{"a", "b"} {
		if err := run(q); err != redis.Nil {
			t.Fatalf("dequeue %s = %v, want redis.Nil", q, err)
		}
	}
	// Both known empty: a dequeue waits for an announcement, and the one
	// for b does not make a be asked.
	done := make(chan error, 1)
	go func() { done <- run("a") }()
	f.setTask("b", true)
	g.wake("b")
	if err := <-done; err != redis.Nil {
		t.Fatalf("dequeue a after b's announcement = %v, want redis.Nil", err)
	}
	if err := run("b"); err != nil {
		t.Fatalf("dequeue b after its announcement = %v, want its task", err)
	}
	if a, b := f.count("a"), f.count("b"); a != 1 || b != 2 {
		t.Errorf("Redis asked about a %d times, b %d; want 1 and 2", a, b)
	}
	// b gave a task, so it is asked again; a is still known empty.
	f.setTask("b", false)
	run("a")
	run("b")
	if a, b := f.count("a"), f.count("b"); a != 1 || b != 3 {
		t.Errorf("Redis asked about a %d times, b %d; want 1 and 3", a, b)
	}
	// An announcement for every queue (a resubscription) asks about each.
	g.wake("")
	run("a")
	run("b")
	if a, b := f.count("a"), f.count("b"); a != 2 || b != 4 {
		t.Errorf("after a wake of all, Redis asked about a %d times, b %d; want 2 and 4", a, b)
	}
}

func TestGateKeepsAnAnnouncementMadeDuringTheDequeue(t *testing.T) {
	g := NewGate([]string{"a"}, time.Hour)
	f := newFake()
	// The task is enqueued, and announced, after the script ran but
	// before its empty reply is recorded.
	f.onAsk = func(q string) { g.wake(q) }
	process := g.Hook().ProcessHook(f.next)
	process(context.Background(), dequeue("a"))
	f.onAsk = nil
	process(context.Background(), dequeue("a"))
	if n := f.count("a"); n != 2 {
		t.Errorf("Redis asked %d times; the announcement during the first dequeue must lead to a second", n)
	}
}

func TestGateRechecksAfterTheInterval(t *testing.T) {
	g := NewGate([]string{"a"}, 0)
	f := newFake()
	process := g.Hook().ProcessHook(f.next)
	for range 3 {
		process(context.Background(), dequeue("a"))
	}
	if n := f.count("a"); n != 3 {
		t.Errorf("Redis asked %d times with no recheck interval, want 3", n)
	}
}

func TestGateCloseReleasesAWaitingDequeue(t *testing.T) {
	g := NewGate([]string{"a"}, time.Hour)
	f := newFake()
	process := g.Hook().ProcessHook(f.next)
	process(context.Background(), dequeue("a")) // now known empty
	done := make(chan error, 1)
	go func() { done <- process(context.Background(), dequeue("a")) }()
	g.Close()
	if err := <-done; err != redis.Nil {
		t.Fatalf("dequeue after Close = %v, want redis.Nil", err)
	}
	if n := f.count("a"); n != 1 {
		t.Errorf("Redis asked %d times, want 1", n)
	}
}

func TestGatePassesOtherCommands(t *testing.T) {
	g := NewGate([]string{"a"}, time.Hour)
	passed := 0
	process := g.Hook().ProcessHook(func(context.Context, redis.Cmder) error { passed++; return nil })
	for _, cmd := range []redis.Cmder{
		redis.NewCmd(context.Background(), "get", "asynq:{a}:pending"),
		redis.NewCmd(context.Background(), "evalsha", "0123abcd", 2, "asynq:{a}:pending", "asynq:{a}:paused"),
		redis.NewCmd(context.Background(), "evalsha", "0123abcd", 4, "asynq:{a}:t:1", "asynq:{a}:pending", "x", "y"),
	} {
		process(context.Background(), cmd)
	}
	if passed != 3 {
		t.Errorf("%d of 3 other commands passed", passed)
	}
}

// TestRecognisesAsynqDequeues runs asynq's own server and checks that the
// gate recognises the dequeues it sends, queue by queue: if a new asynq
// dequeued differently, the gate would let every poll through.
func TestRecognisesAsynqDequeues(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	rdb := r.Opt.MakeRedisClient().(redis.UniversalClient)
	defer rdb.Close()
	seen := make(chan string, 100)
	rdb.AddHook(spy(func(cmd redis.Cmder) {
		if q := dequeuedQueue(cmd); q != "" {
			select {
			case seen <- q:
			default:
			}
		}
	}))
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Queues: map[string]int{"a": 1, "b": 1}, TaskCheckInterval: time.Millisecond, LogLevel: asynq.FatalLevel,
	})
	if err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case q := <-seen:
			got[q] = true
		case <-time.After(30 * time.Second):
			t.Fatalf("no dequeue recognised for some queue in 30 s (recognised: %v)", got)
		}
	}
}

// TestIdleServerPicksUpAnnouncedTasks runs asynq's server behind a gate that
// never rechecks on its own: announced tasks are picked up all the same.
func TestIdleServerPicksUpAnnouncedTasks(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	rdb := r.Opt.MakeRedisClient().(redis.UniversalClient)
	defer rdb.Close()
	g := NewGate([]string{"a", "b"}, time.Hour)
	rdb.AddHook(g.Hook())
	g.Listen(rdb)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Queues: map[string]int{"a": 1, "b": 1}, TaskCheckInterval: time.Millisecond, LogLevel: asynq.FatalLevel,
	})
	ran := make(chan string, 10)
	if err := srv.Start(asynq.HandlerFunc(func(_ context.Context, task *asynq.Task) error {
		ran <- string(task.Payload())
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	defer g.Close()
	client := asynq.NewClientFromRedisClient(r.Client)
	for i, q := range []string{"a", "b", "a"} {
		if _, err := client.Enqueue(asynq.NewTask("t", []byte{byte('0' + i)}), asynq.Queue(q)); err != nil {
			t.Fatal(err)
		}
		if err := Notify(context.Background(), r.Client, q); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-ran:
			if got != string(rune('0'+i)) {
				t.Fatalf("ran task %s, want %d", got, i)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("announced task %d on %s not run in 30 s", i, q)
		}
	}
}

type spy func(cmd redis.Cmder)

func (s spy) DialHook(next redis.DialHook) redis.DialHook { return next }
func (s spy) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (s spy) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s(cmd)
		return next(ctx, cmd)
	}
}
