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
// stack (outbox transaction and relay, this package's server config and
// middleware) with bare asynq (client.Enqueue, a plain ServeMux) on the same
// Redis, in one run, and reports the ratio. Target: ratio >= 0.85.
//
//	make bench   (real Postgres and Redis)
func BenchmarkThroughput(b *testing.B) {
	if os.Getenv("DOMAIND_TEST_REDIS_URL") == "" {
		b.Skip("throughput is measured on real Redis: set DOMAIND_TEST_REDIS_URL (make bench does)")
	}
	tasks.Specs[typeBenchNoop] = tasks.Spec{Queue: tasks.QueueTools, MaxRetry: 1, Timeout: time.Minute}
	defer delete(tasks.Specs, typeBenchNoop)

	// Two cores carry Postgres, Redis and this process: each round runs the
	// two pipelines back to back, and the ratio is the median of the rounds'
	// ratios, so a noisy moment weighs on one round, not on the result.
	var bare, stack, ratios []float64
	for range benchRounds {
		rb, rs := measure(b, runBare), measure(b, runStack)
		bare, stack, ratios = append(bare, rb), append(stack, rs), append(ratios, rs/rb)
	}
	mb, ms, mr := median(bare), median(stack), median(ratios)
	b.ReportMetric(mb, "bare_tasks/s")
	b.ReportMetric(ms, "stack_tasks/s")
	b.ReportMetric(mr, "ratio")
	b.Logf("%d rounds of %d no-op tasks: bare asynq median %.0f tasks/s (rounds %.0f), domaind stack median %.0f tasks/s (rounds %.0f), ratio median %.2f (rounds %.2f)",
		benchRounds, benchTasks, mb, bare, ms, stack, mr, ratios)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// measure runs one of the two pipelines on a fresh Redis database and returns tasks/s.
func measure(b *testing.B, run func(b *testing.B, r *platformtest.Redis, done *atomic.Int64) time.Duration) float64 {
	r := platformtest.NewRedis(b)
	var done atomic.Int64
	d := run(b, r, &done)
	return benchTasks / d.Seconds()
}

func serverConfig() asynq.Config {
	return asynq.Config{
		Concurrency: Concurrency, Queues: tasks.QueueWeights, TaskCheckInterval: TaskCheckInterval,
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
	srv := asynq.NewServer(r.Opt, serverConfig())
	mux := asynq.NewServeMux()
	mux.HandleFunc(typeBenchNoop, func(context.Context, *asynq.Task) error { done.Add(1); return nil })
	if err := srv.Start(mux); err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown()
	client := asynq.NewClientFromRedisClient(r.Client)
	start := time.Now()
	produce(func(n int) {
		for range n {
			if _, err := client.Enqueue(asynq.NewTask(typeBenchNoop, nil), asynq.Queue(tasks.QueueTools)); err != nil {
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
				if err := tx.Add(asynq.NewTask(typeBenchNoop, nil)); err != nil {
					return err
				}
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
	calls, inScripts := monitor(b, r.Opt, window)
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
