package worker

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/internal/metrics"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/queuewake"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

const (
	benchTasks     = 20_000
	benchRounds    = 7
	benchProducers = 8
	benchBatch     = 50
	typeBenchNoop  = "bench:noop"
)

// BenchmarkThroughput compares no-op tasks per second through the project's
// stack (outbox transaction and relay, this package's server and
// middleware) with bare asynq (client.Enqueue, a plain ServeMux, asynq
// polling its idle queues every barePoll) on the same Redis, in one run, and
// reports the ratio. Target: ratio >= 0.95. A third pipeline, bare asynq
// behind this package's gated server (client.Enqueue and one announcement
// per batch), tells the cost of the outbox and the middleware from the gain
// of not polling.
//
//	make bench   (real Postgres and Redis)
//
// benchNoop is the payload of the benchmark's tasks, which do nothing.
type benchNoop struct{}

func (benchNoop) TaskType() string { return typeBenchNoop }

func BenchmarkThroughput(b *testing.B) {
	if os.Getenv("DOMAIND_TEST_REDIS_URL") == "" {
		b.Skip("throughput is measured on real Redis: set DOMAIND_TEST_REDIS_URL (make bench does)")
	}
	tasks.Specs[typeBenchNoop] = tasks.Spec{Queue: tasks.QueueTools, MaxRetry: 1, Timeout: time.Minute}
	defer delete(tasks.Specs, typeBenchNoop)

	// Two cores carry Postgres, Redis and this process: each round runs the
	// pipelines back to back, and the ratios are the medians of the rounds'
	// ratios, so a noisy moment weighs on one round, not on the result.
	r := platformtest.NewRedis(b)
	var bare, gated, stack, ratios, gatedRatios []float64
	for range benchRounds {
		rb, rg, rs := measure(b, r, runBare), measure(b, r, runGated), measure(b, r, runStack)
		bare, gated, stack = append(bare, rb), append(gated, rg), append(stack, rs)
		ratios, gatedRatios = append(ratios, rs/rb), append(gatedRatios, rs/rg)
	}
	mb, mg, ms, mr, mgr := median(bare), median(gated), median(stack), median(ratios), median(gatedRatios)
	b.ReportMetric(mb, "bare_tasks/s")
	b.ReportMetric(mg, "gated_tasks/s")
	b.ReportMetric(ms, "stack_tasks/s")
	b.ReportMetric(mr, "ratio")
	b.ReportMetric(mgr, "ratio_gated")
	b.Logf("%d rounds of %d no-op tasks: bare asynq (idle poll %v) median %.0f tasks/s (rounds %.0f); bare asynq on the gated server median %.0f tasks/s (rounds %.0f); domaind stack median %.0f tasks/s (rounds %.0f); ratio stack/bare median %.2f (rounds %.2f); stack/gated median %.2f (rounds %.2f)",
		benchRounds, benchTasks, barePoll, mb, bare, mg, gated, ms, stack, mr, ratios, mgr, gatedRatios)
}

// barePoll is bare asynq's idle poll in BenchmarkThroughput: the 25 ms
// this package used before its gate (asynq's default, 1 s, would leave a
// drained queue idle for up to 1.5 s).
const barePoll = 25 * time.Millisecond

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// measure runs one of the pipelines on r, flushed first, and returns tasks/s.
func measure(b *testing.B, r *platformtest.Redis, run func(b *testing.B, r *platformtest.Redis, done *atomic.Int64) time.Duration) float64 {
	if err := r.Client.FlushDB(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
	var done atomic.Int64
	d := run(b, r, &done)
	return benchTasks / d.Seconds()
}

func serverConfig(poll time.Duration) asynq.Config {
	return asynq.Config{
		Concurrency: Concurrency, Queues: tasks.QueueWeights, TaskCheckInterval: poll,
		LogLevel: asynq.FatalLevel,
	}
}

func waitAll(b *testing.B, done *atomic.Int64) {
	deadline := time.Now().Add(5 * time.Minute)
	for done.Load() < benchTasks {
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d tasks ran", done.Load(), benchTasks)
		}
		time.Sleep(time.Millisecond)
	}
}

func produce(each func(n int)) {
	var wg sync.WaitGroup
	for p := range benchProducers {
		wg.Go(func() {
			for i := p * benchBatch; i < benchTasks; i += benchProducers * benchBatch {
				each(min(benchBatch, benchTasks-i))
			}
		})
	}
	wg.Wait()
}

func runBare(b *testing.B, r *platformtest.Redis, done *atomic.Int64) time.Duration {
	srv := asynq.NewServer(r.Opt, serverConfig(barePoll))
	if err := srv.Start(countingMux(done)); err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown()
	return enqueueAll(b, r, done, false)
}

func runGated(b *testing.B, r *platformtest.Redis, done *atomic.Int64) time.Duration {
	srv := newGatedServer(r.Opt, serverConfig(TaskCheckInterval))
	if err := srv.start(countingMux(done)); err != nil {
		b.Fatal(err)
	}
	defer srv.shutdown()
	return enqueueAll(b, r, done, true)
}

func countingMux(done *atomic.Int64) *asynq.ServeMux {
	mux := asynq.NewServeMux()
	mux.HandleFunc(typeBenchNoop, func(context.Context, *asynq.Task) error { done.Add(1); return nil })
	return mux
}

// enqueueAll enqueues the no-op tasks with client.Enqueue (announcing each
// batch when announce is set) and returns when they have all run.
func enqueueAll(b *testing.B, r *platformtest.Redis, done *atomic.Int64, announce bool) time.Duration {
	client := asynq.NewClientFromRedisClient(r.Client)
	start := time.Now()
	produce(func(n int) {
		for range n {
			if _, err := client.Enqueue(asynq.NewTask(typeBenchNoop, nil), asynq.Queue(tasks.QueueTools)); err != nil {
				b.Error(err)
			}
		}
		if announce {
			if err := queuewake.Notify(context.Background(), r.Client, tasks.QueueTools); err != nil {
				b.Error(err)
			}
		}
	})
	waitAll(b, done)
	return time.Since(start)
}

func runStack(b *testing.B, r *platformtest.Redis, done *atomic.Int64) time.Duration {
	db := modelstest.NewDB(b)
	ob := outbox.New(db, r.Client, quiet)
	defer ob.Close()
	w := New(Deps{DB: db, Outbox: ob, Metrics: metrics.New(), Log: quiet, RedisOpt: r.Opt})
	w.mux.HandleFunc(typeBenchNoop, func(context.Context, *asynq.Task) error { done.Add(1); return nil })
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Shutdown()
	start := time.Now()
	produce(func(n int) {
		err := ob.Transaction(context.Background(), func(tx *outbox.Tx) error {
			for range n {
				tx.Add(benchNoop{})
			}
			return nil
		})
		if err != nil {
			b.Error(err)
		}
	})
	waitAll(b, done)
	return time.Since(start)
}

// BenchmarkIdleRedis counts the Redis commands one idle worker process
// sends per second: MONITOR on the worker's own database number for a few
// seconds after start-up, the commands its Lua scripts run included (they
// are what Redis spends its time on). Target: under 300 per second.
//
//	make bench   (real Redis)
func BenchmarkIdleRedis(b *testing.B) {
	if os.Getenv("DOMAIND_TEST_REDIS_URL") == "" {
		b.Skip("counted with MONITOR on real Redis: set DOMAIND_TEST_REDIS_URL (make bench does)")
	}
	const settle, window = 2 * time.Second, 10 * time.Second
	r := platformtest.NewRedis(b)
	w := New(Deps{Metrics: metrics.New(), Log: quiet, RedisOpt: r.Opt})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Shutdown()
	time.Sleep(settle) // past the start-up writes
	calls, inScripts := monitor(b, r.Server(b), window)
	perSec := float64(calls) / window.Seconds()
	b.ReportMetric(perSec, "commands/s")
	b.ReportMetric(float64(calls-inScripts)/window.Seconds(), "sent/s")
	b.Logf("one idle worker over %v: %.0f Redis commands/s, of which %.0f/s sent by the worker and %.0f/s run by its scripts",
		window, perSec, float64(calls-inScripts)/window.Seconds(), float64(inScripts)/window.Seconds())
}

// monitor runs MONITOR for d and counts the commands run on opt's database
// number, and how many of them a Lua script ran.
func monitor(b *testing.B, opt asynq.RedisClientOpt, d time.Duration) (calls, inScripts int) {
	conn, err := net.Dial("tcp", opt.Addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if opt.Password != "" {
		fmt.Fprintf(conn, "AUTH %s %s\r\n", cmp.Or(opt.Username, "default"), opt.Password)
	}
	fmt.Fprintf(conn, "MONITOR\r\n")
	conn.SetReadDeadline(time.Now().Add(d))
	db := fmt.Sprintf(" [%d ", opt.DB)
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, db) {
			continue
		}
		calls++
		if strings.Contains(line, db+"lua]") {
			inScripts++
		}
	}
	return calls, inScripts
}
