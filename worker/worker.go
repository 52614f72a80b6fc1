// Package worker runs every task: an asynq server on the named, weighted
// queues of package tasks, one handler per task type, behind a middleware
// that logs, recovers panics and records metrics.
//
// An idle worker does not poll its queues: asynq's server tries each queue
// (one Lua script apiece) every TaskCheckInterval when all are empty, which
// at the 25 ms that interactive lookups once needed cost Redis about 660
// commands a second per idle worker process, and still left a WHOIS request
// waiting 25 ms on average for the pick-up. Instead the outbox announces
// the queues it enqueues to on Redis pub/sub, and a queuewake.Gate on the
// server's Redis client holds the dequeues of queues known to be empty
// until an announcement or a recheck (IdleRecheck) comes: a task is picked
// up within a round trip of its commit, on every queue alike, and an idle
// worker costs Redis a few commands a second. (A second asynq server
// polling the rdap queue every few milliseconds was the other way: each
// poll is three commands, so a 5 ms interval alone is some 600 a second.)
//
// An asynq server dequeues one task at a time, each a Redis round trip, so
// a burst (200 orders' webhooks at once) waits in line for its pick-up
// however many handlers are free: at 3 ms a round trip on a busy machine,
// the last of 200 waited 600 ms. A worker process therefore runs Lanes
// servers on one gated Redis client, sharing Concurrency: they dequeue in
// parallel, and the shared gate keeps an idle process as quiet as one
// server.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/canary"
	"github.com/domaind/domaind/internal/checkout"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/internal/logging"
	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/metrics"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/internal/queuewake"
	"github.com/domaind/domaind/internal/rdap"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/requestid"
	"github.com/domaind/domaind/internal/settlement"
	"github.com/domaind/domaind/internal/tools"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// Deps is what the handlers work with.
type Deps struct {
	DB       *gorm.DB
	Outbox   *outbox.Outbox
	Metrics  *metrics.Metrics
	Log      *slog.Logger
	RedisOpt asynq.RedisConnOpt
	Registry registry.Provider
	// Resolver answers lookups; LookupCache caches and announces them.
	Resolver    *lookup.Resolver
	LookupCache *lookup.Cache
	// RDAP is the resolver's RDAP client, whose bootstrap the refresh task
	// replaces with BootstrapSource's newer copies (fetched through HTTP).
	RDAP            *rdap.Client
	BootstrapSource string
	HTTP            *http.Client
	// Tools run the async free-tool jobs.
	Tools *tools.Registry
	// Webhooks deliver partners' events.
	Webhooks *webhook.Service
	// Orders push sold domains to their buyers' registrars.
	Orders *order.Service
	// Payments give hosted orders' refunds back to the cards, by
	// environment (payment.Providers); PaymentBook returns charges that
	// paid for no order and reconciles payments whose answer was lost.
	Payments    map[string]payment.Provider
	PaymentBook *payment.Book
	// Checkout acts on the processors' notices of payments made on their
	// pages (Stripe's webhook events).
	Checkout *checkout.Service
	// Settlements run the settlement periods.
	Settlements *settlement.Service
	// Fetch is the SSRF-safe client the brokerage's site probes fetch
	// home pages through.
	Fetch *fetch.Client
}

// Worker is a started or startable asynq server with the service's handlers.
type Worker struct {
	srv       *gatedServer
	mux       *asynq.ServeMux
	inspector *asynq.Inspector
}

// Concurrency is how many tasks one worker process runs at once. Tasks wait
// on the network (registries, RDAP, webhooks) far more than they compute.
const Concurrency = 40

// Lanes is how many asynq servers of one worker process dequeue side by
// side, each running Concurrency/Lanes tasks at once.
const Lanes = 4

// TaskCheckInterval is the pause of asynq's server after a pass that found
// every queue empty. The gate makes the next pass wait for work, so the
// pause only delays a task announced during it.
const TaskCheckInterval = time.Millisecond

// IdleRecheck is how often an idle worker asks Redis about a queue nothing
// was announced on: the longest a task enqueued without an announcement
// (a periodic task, a retry coming due) waits for an idle worker.
const IdleRecheck = time.Second

// New builds the server and registers every handler.
func New(d Deps) *Worker {
	srv := newGatedServer(d.RedisOpt, asynq.Config{
		Concurrency:       Concurrency,
		Queues:            tasks.QueueWeights,
		TaskCheckInterval: TaskCheckInterval,
		ShutdownTimeout:   20 * time.Second,
		Logger:            logging.Asynq{Log: d.Log},
		LogLevel:          asynq.WarnLevel,
		RetryDelayFunc:    retryDelay,
	})
	mux := asynq.NewServeMux()
	mux.Use(observe(d.Log, d.Metrics))
	Handle(mux, &outboxSweep{outbox: d.Outbox})
	Handle(mux, &cleanup{db: d.DB, log: d.Log})
	inspector := asynq.NewInspector(d.RedisOpt)
	Handle(mux, &rescue{db: d.DB, outbox: d.Outbox, inspector: inspector, log: d.Log})
	Handle(mux, &canaryRun{db: d.DB, canaries: canary.New(d.DB, d.Outbox)})
	Handle(mux, &tldSync{db: d.DB, registry: d.Registry, log: d.Log})
	Handle(mux, &lookupRun{db: d.DB, resolver: d.Resolver, cache: d.LookupCache, retries: LookupRetries})
	Handle(mux, &toolRun{db: d.DB, tools: d.Tools})
	Handle(mux, &bulkRun{db: d.DB, registry: d.Registry, concurrency: BulkConcurrency, backoff: itemBackoff})
	Handle(mux, &webhookDeliver{webhooks: d.Webhooks, outbox: d.Outbox})
	Handle(mux, &webhookFanOut{webhooks: d.Webhooks, outbox: d.Outbox})
	Handle(mux, &transferPush{orders: d.Orders, registry: d.Registry})
	Handle(mux, &cardRefund{orders: d.Orders, providers: d.Payments})
	Handle(mux, &paymentReturn{book: d.PaymentBook})
	Handle(mux, &paymentEvent{checkout: d.Checkout, book: d.PaymentBook})
	Handle(mux, &paymentReconcile{book: d.PaymentBook})
	Handle(mux, &brokerageProbe{db: d.DB, fetch: d.Fetch, log: d.Log, now: time.Now})
	Handle(mux, &settlementRun{settlements: d.Settlements})
	Handle(mux, &settlementSchedule{settlements: d.Settlements})
	Handle(mux, &ledgerRollup{settlements: d.Settlements})
	Handle(mux, &rdapBootstrapRefresh{db: d.DB, hc: d.HTTP, source: d.BootstrapSource, client: d.RDAP, log: d.Log})
	return &Worker{srv: srv, mux: mux, inspector: inspector}
}

// Handler works on the tasks that carry P.
type Handler[P tasks.Payload] interface {
	// Work does the task of p; an error is for asynq to retry (wrap
	// asynq.SkipRetry for one that must not be).
	Work(ctx context.Context, p P) error
}

// Handle registers h on mux for the tasks of P's type: each task's
// payload is decoded once, into P, before h works on it, and one that does
// not decode is failed without a retry.
func Handle[P tasks.Payload](mux *asynq.ServeMux, h Handler[P]) {
	var zero P
	mux.HandleFunc(zero.TaskType(), func(ctx context.Context, t *asynq.Task) error {
		p, err := tasks.Decode[P](t)
		if err != nil {
			return err
		}
		return h.Work(ctx, p)
	})
}

// Start starts processing in the background.
func (w *Worker) Start() error { return w.srv.start(w.mux) }

// Shutdown stops fetching new tasks, waits up to the shutdown timeout for
// running ones, and hands the unfinished back to the queue.
func (w *Worker) Shutdown() {
	w.srv.shutdown()
	w.inspector.Close()
}

// gatedServer is Lanes asynq servers on one Redis client of their own,
// whose dequeues of the configured queues pass one queuewake.Gate.
type gatedServer struct {
	srvs []*asynq.Server
	rdb  redis.UniversalClient
	gate *queuewake.Gate
}

func newGatedServer(opt asynq.RedisConnOpt, cfg asynq.Config) *gatedServer {
	rdb := opt.MakeRedisClient().(redis.UniversalClient)
	gate := queuewake.NewGate(slices.Collect(maps.Keys(cfg.Queues)), IdleRecheck)
	rdb.AddHook(gate.Hook())
	cfg.Concurrency /= Lanes
	s := &gatedServer{rdb: rdb, gate: gate}
	for range Lanes {
		s.srvs = append(s.srvs, asynq.NewServerFromRedisClient(rdb, cfg))
	}
	return s
}

func (s *gatedServer) start(h asynq.Handler) error {
	s.gate.Listen(s.rdb)
	for _, srv := range s.srvs {
		if err := srv.Start(h); err != nil {
			return err
		}
	}
	return nil
}

// shutdown releases the waiting dequeues first, so that the servers'
// shutdown is not held up by them.
func (s *gatedServer) shutdown() {
	s.gate.Close()
	var wg sync.WaitGroup
	for _, srv := range s.srvs {
		wg.Go(srv.Shutdown)
	}
	wg.Wait()
	s.rdb.Close()
}

// retryDelay retries a task whose worker died (lease expired) at once, since
// nothing is wrong with the task itself; other failures wait as the type's
// Spec says (tasks.Spec.Delay, jittered), or as asynq's default when it
// says nothing. Work that counts its own failures (tasks.Counted) waits
// by the larger count: a task the rescue handed back starts asynq's n
// again.
func retryDelay(n int, err error, t *asynq.Task) time.Duration {
	if errors.Is(err, asynq.ErrLeaseExpired) {
		return time.Second
	}
	if counted := tasks.Counted(nil); errors.As(err, &counted) {
		n = max(n, counted.FailedBefore())
	}
	if d, ok := tasks.Specs[t.Type()].Delay(n, (rand.Float64()*2-1)*tasks.Jitter); ok {
		return d
	}
	return asynq.DefaultRetryDelayFunc(n, err, t)
}

// observe carries the request id from the task header into the context,
// turns a panic into an error, logs failures and records per-type metrics.
func observe(log *slog.Logger, m *metrics.Metrics) asynq.MiddlewareFunc {
	return func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) (err error) {
			if id := t.Headers()[tasks.HeaderRequestID]; id != "" {
				ctx = requestid.With(ctx, id)
			}
			ctx, foundDone := tasks.TrackFoundDone(ctx)
			start := time.Now()
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic in %s handler: %v", t.Type(), r)
					log.ErrorContext(ctx, "task panicked", "task_type", t.Type(), "panic", r, "stack", string(debug.Stack()))
				}
				d := time.Since(start)
				m.ObserveTask(t.Type(), d, err)
				taskID, _ := asynq.GetTaskID(ctx)
				retried, _ := asynq.GetRetryCount(ctx)
				if foundDone() {
					m.FoundDone(t.Type())
					log.InfoContext(ctx, "task found its work done already", "task_type", t.Type(), "task_id", taskID, "retried", retried)
				}
				if err != nil {
					log.WarnContext(ctx, "task failed", "task_type", t.Type(), "task_id", taskID, "retried", retried, "duration", d, "err", err)
				} else if log.Enabled(ctx, slog.LevelDebug) {
					log.DebugContext(ctx, "task done", "task_type", t.Type(), "task_id", taskID, "retried", retried, "duration", d)
				}
			}()
			return next.ProcessTask(ctx, t)
		})
	}
}

// loadRow reads the row (of type T) a task names by id. A row that is not
// there is an error the task is not retried for: retrying cannot make it.
func loadRow[T any](db *gorm.DB, what, id string) (T, error) {
	var row T
	err := models.Found(db.Take(&row, "id = ?", id).Error, what+" "+id)
	if e, ok := fault.As(err); ok && e.Code == fault.NotFound {
		return row, fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	return row, err
}
