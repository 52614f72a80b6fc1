package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/internal/payment/stripepay/stripepaytest"
	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/partnerclient"
	"github.com/domaind/domaind/tasks"
)

// TestMoneyChaos is the model check of the money paths: a randomized
// concurrent workload of every money action (chaosActions) against the
// binary's api, two workers and the scheduler on real Postgres and Redis,
// with a worker killed (SIGKILL) and restarted at random. When the
// workload stops and the work it queued has run out, it checks every
// invariant (chaosInvariants), printing each with its counts.
//
// DOMAIND_CHAOS_DURATION sets how long the workload runs (30s by default:
// the short run of make test-real; make chaos runs longer), and
// DOMAIND_CHAOS_SEED replays a run's choices (each worker goroutine's
// actions and their arguments; the interleavings are the machine's).
func TestMoneyChaos(t *testing.T) {
	c := newCluster(t)
	run := chaosSettings(t)
	t.Logf("chaos: seed %d, workload %v (replay: DOMAIND_CHAOS_SEED=%d)", run.seed, run.duration, run.seed)
	w := newChaosWorld(t, c, run)

	killer := w.killWorkersUntil(time.Now().Add(run.duration / 2))
	w.runWorkload(run)
	<-killer
	w.settleAndCheck(run)
}

// runWorkload runs run.goroutines goroutines of random actions for
// run.duration.
func (w *chaosWorld) runWorkload(run chaosRun) {
	deadline := time.Now().Add(run.duration)
	var wg sync.WaitGroup
	for g := range run.goroutines {
		rng := rand.New(rand.NewPCG(run.seed, uint64(g)))
		wg.Go(func() {
			for time.Now().Before(deadline) {
				w.act(rng)
				// Paced under the partner API's 600 requests a minute per
				// credential, so that most actions are tried, not refused.
				time.Sleep(time.Duration(100+rng.IntN(200)) * time.Millisecond)
			}
		})
	}
	wg.Wait()
}

// settleAndCheck waits for the work the workload queued to run out, then
// checks every invariant.
func (w *chaosWorld) settleAndCheck(run chaosRun) {
	t := w.t
	started := time.Now()
	w.quiesce()
	t.Logf("chaos: %d actions; quiet %.1fs after the workload", w.actions(), time.Since(started).Seconds())
	w.report()
	for _, inv := range chaosInvariants {
		counts, problems := inv.check(w)
		t.Logf("invariant %-10s %s: %s", inv.name, inv.what, counts)
		for _, p := range problems {
			t.Errorf("invariant %s violated: %s", inv.name, p)
		}
	}
	if t.Failed() {
		t.Logf("chaos: replay with DOMAIND_CHAOS_SEED=%d", run.seed)
	}
}

// chaosRun is a run's settings.
type chaosRun struct {
	seed       uint64
	duration   time.Duration
	goroutines int
	// noStripe leaves the live checkout without Stripe: no payments on
	// Stripe's page.
	noStripe bool
}

func chaosSettings(t *testing.T) chaosRun {
	r := chaosRun{seed: uint64(time.Now().UnixNano()), duration: 30 * time.Second, goroutines: 6}
	if v := os.Getenv("DOMAIND_CHAOS_SEED"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("DOMAIND_CHAOS_SEED=%q: %v", v, err)
		}
		r.seed = seed
	}
	if v := os.Getenv("DOMAIND_CHAOS_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 5*time.Second {
			t.Fatalf("DOMAIND_CHAOS_DURATION=%q: want a duration of 5s or more", v)
		}
		r.duration = d
	}
	return r
}

// chaosWorld is what the workload acts on and what the invariants read:
// the processes, the partners with their clients, the listings, and what
// the actions made so far.
type chaosWorld struct {
	t        *testing.T
	c        *cluster
	api      *process
	base     string
	receiver *eventReceiver

	workersMu sync.Mutex
	workers   []*process
	lastKill  time.Time
	kills     int

	partners []*chaosPartner
	listings []chaosListing
	links    []string // referral codes of the affiliates

	// stripeMock answers for Stripe: the live checkout takes its payments
	// on Stripe's page, and the workload sends Stripe's notices.
	stripeMock   string
	liveListings []chaosListing

	mu       sync.Mutex
	orders   []chaosOrder
	quotes   []chaosQuote
	stripe   []stripeSale
	outcomes map[string]map[string]int // action → outcome → count
	problems []string                  // answers no caller should get
}

type chaosPartner struct {
	id        string
	client    *partnerclient.Client
	live      *partnerclient.Client // its live credential's, for checkouts paid on Stripe
	affiliate bool
}

type chaosListing struct {
	domain string
	cents  int64
}

type chaosOrder struct {
	id      string
	partner int
	hosted  bool
	live    bool // paid on Stripe's page: the partner's live credential's
}

type chaosQuote struct {
	id      string
	partner int
	domain  string
	cents   int64
}

// The shape of the world.
const (
	chaosPartners   = 4
	chaosAffiliates = 2
	chaosListings   = 300
	chaosLive       = 150 // live listings, sold on Stripe's page
	chaosBuyerEmail = "buyer@chaos.example"
)

// chaosEnv is the configuration of the processes: one-minute settlement
// periods, a sandbox registry and card processor that take their time,
// and a processor that loses the answer of one charge in ten.
var chaosEnv = []string{
	"DOMAIND_SETTLEMENT_PERIOD=1m",
	"DOMAIND_SANDBOX_LATENCY=20ms",
	"DOMAIND_SANDBOX_PAYMENT_FAILURES=0.1",
	"DOMAIND_TRUSTED_PROXIES=127.0.0.1/32", // buyers come through a proxy, each from an address of their own
	"DOMAIND_LOG_LEVEL=warn",
}

// newChaosWorld starts the processes, with extraEnv after chaosEnv, and
// makes the partners and listings the workload acts on.
func newChaosWorld(t *testing.T, c *cluster, run chaosRun, extraEnv ...string) *chaosWorld {
	t.Helper()
	c.env = append(c.env, chaosEnv...)
	mock := ""
	if !run.noStripe {
		mock = testtool.StripeMock(t)
		c.env = append(c.env, "DOMAIND_PAYMENT_PROVIDER=stripe", "DOMAIND_STRIPE_SECRET_KEY="+stripepaytest.Key,
			"DOMAIND_STRIPE_WEBHOOK_SECRET="+stripepaytest.WebhookSecret, "DOMAIND_STRIPE_API_URL="+mock)
	}
	c.env = append(c.env, extraEnv...)
	c.run("migrate")
	w := &chaosWorld{t: t, c: c, outcomes: map[string]map[string]int{}, receiver: newEventReceiver(t), stripeMock: mock}
	ctx := context.Background()
	partners := partner.New(c.db, []byte("e2e-secret-key-0123456789abcdef0123456789"), time.Now)
	setup := rand.New(rand.NewPCG(run.seed, 1<<32))
	for i := range chaosListings {
		cents := int64(1_000 + setup.IntN(300_000))
		if i%10 == 0 { // above the review threshold: ops clear them first
			cents = 500_000 + int64(setup.IntN(400_000))
		}
		w.listings = append(w.listings, chaosListing{domain: fmt.Sprintf("chaos-%03d.com", i), cents: cents})
		if err := c.db.Create(&models.SandboxListing{ID: models.NewID(), Domain: w.listings[i].domain, TLD: "com", BINCents: &cents,
			Currency: "USD", CreatedAt: time.Now()}).Error; err != nil {
			t.Fatal(err)
		}
	}
	for i := range chaosLive {
		cents := int64(1_000 + setup.IntN(300_000))
		w.liveListings = append(w.liveListings, chaosListing{domain: fmt.Sprintf("chaos-live-%03d.com", i), cents: cents})
		if err := c.db.Create(&models.Listing{ID: models.NewID(), Domain: w.liveListings[i].domain, TLD: "com", BINCents: &cents,
			Currency: "USD", Approved: true, MarketplaceVisible: true, CreatedAt: time.Now()}).Error; err != nil {
			t.Fatal(err)
		}
	}
	w.api = c.start("api")
	w.base = "http://" + w.api.addr
	for i := range chaosPartners {
		p, err := partners.Create(ctx, fmt.Sprintf("Chaos Partner %d", i), fmt.Sprintf("ops%d@chaos.example", i))
		if err == nil {
			_, err = partners.Approve(ctx, p.ID)
		}
		if err != nil {
			t.Fatal(err)
		}
		affiliate := i < chaosAffiliates
		if err := c.db.Model(&models.Partner{}).Where("id = ?", p.ID).
			Updates(map[string]any{"affiliate": affiliate, "commission_bps": 1000 + 500*i}).Error; err != nil {
			t.Fatal(err)
		}
		cred, err := partners.IssueCredential(ctx, p.ID, models.EnvSandbox, partner.AllScopes)
		if err != nil {
			t.Fatal(err)
		}
		cp := &chaosPartner{id: p.ID, affiliate: affiliate, client: partnerclient.New(w.base, cred.KeyID, cred.Secret,
			partnerclient.WithRetryPolicy(partnerclient.RetryPolicy{MaxAttempts: 1}))}
		live, err := partners.IssueCredential(ctx, p.ID, models.EnvLive, partner.AllScopes)
		if err != nil {
			t.Fatal(err)
		}
		cp.live = partnerclient.New(w.base, live.KeyID, live.Secret, partnerclient.WithRetryPolicy(partnerclient.RetryPolicy{MaxAttempts: 1}))
		w.partners = append(w.partners, cp)
		for _, client := range []*partnerclient.Client{cp.client, cp.live} {
			if err := client.PutJSON(ctx, "/api/partner/webhooks", map[string]string{"url": w.receiver.url + "/hooks/" + p.ID,
				"secret": "chaos-webhook-secret-" + p.ID}, nil); err != nil {
				t.Fatalf("register the webhook of %s: %v", p.ID, err)
			}
		}
		if affiliate {
			var link struct{ Code string }
			if err := cp.client.PostJSON(ctx, "/api/partner/v1/links", map[string]string{"kind": "generic"}, &link); err != nil {
				t.Fatalf("a referral link of %s: %v", p.ID, err)
			}
			w.links = append(w.links, link.Code)
		}
	}
	w.workers = []*process{c.start("worker"), c.start("worker")}
	c.start("scheduler")
	return w
}

// act runs one action chosen by weight.
func (w *chaosWorld) act(rng *rand.Rand) {
	total := 0
	for _, a := range chaosActions {
		total += a.weight
	}
	n := rng.IntN(total)
	for _, a := range chaosActions {
		if n < a.weight {
			w.tally(a.name, a.run(w, rng))
			return
		}
		n -= a.weight
	}
}

// tally counts an action's outcome.
func (w *chaosWorld) tally(action, outcome string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.outcomes[action] == nil {
		w.outcomes[action] = map[string]int{}
	}
	w.outcomes[action][outcome]++
}

// unexpected notes an answer no caller should get (a 5xx, a transport
// error), which fails the run.
func (w *chaosWorld) unexpected(format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	w.mu.Lock()
	w.problems = append(w.problems, msg)
	w.mu.Unlock()
	return "unexpected"
}

func (w *chaosWorld) actions() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, byOutcome := range w.outcomes {
		for _, k := range byOutcome {
			n += k
		}
	}
	return n
}

// report logs what each action got, and fails on the unexpected answers.
func (w *chaosWorld) report() {
	w.mu.Lock()
	defer w.mu.Unlock()
	names := make([]string, 0, len(w.outcomes))
	for name := range w.outcomes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		var parts []string
		for outcome, n := range w.outcomes[name] {
			parts = append(parts, fmt.Sprintf("%s×%d", outcome, n))
		}
		slices.Sort(parts)
		w.t.Logf("action %-16s %s", name, strings.Join(parts, " "))
	}
	w.t.Logf("chaos: %d worker kills", w.kills)
	for _, p := range w.problems {
		w.t.Errorf("unexpected answer: %s", p)
	}
}

// killWorkersUntil kills a random worker with SIGKILL every few seconds
// and restarts it a moment later, until end; the channel closes then.
func (w *chaosWorld) killWorkersUntil(end time.Time) <-chan struct{} {
	done := make(chan struct{})
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	go func() {
		defer close(done)
		for {
			pause := time.Duration(2000+rng.IntN(4000)) * time.Millisecond
			if time.Now().Add(pause).After(end) {
				return
			}
			time.Sleep(pause)
			w.workersMu.Lock()
			i := rng.IntN(len(w.workers))
			w.c.kill(w.workers[i])
			w.lastKill, w.kills = time.Now(), w.kills+1
			w.workersMu.Unlock()
			time.Sleep(time.Duration(200+rng.IntN(1500)) * time.Millisecond)
			w.workersMu.Lock()
			w.workers[i] = w.c.start("worker")
			w.workersMu.Unlock()
		}
	}()
	return done
}

// asynqRecovery is how long after a worker's death asynq hands its
// tasks to another: their lease (30 s) plus the recoverer's allowance for
// clock skew (30 s). A worker's recoverer runs when it starts and every
// minute after.
const asynqRecovery = 61 * time.Second

// quiesce waits until the work the workload queued has run out: no
// payment pending or waiting to be returned, no card refund pending, every
// push settled, every webhook delivery done, no settlement run running.
// Tasks a killed worker held are recovered by the next recoverer run
// after asynqRecovery; rather than wait up to a minute more for one, a
// worker is restarted (gracefully) once that time has passed.
func (w *chaosWorld) quiesce() {
	w.t.Helper()
	w.workersMu.Lock()
	lastKill := w.lastKill
	w.workersMu.Unlock()
	restarted := lastKill.IsZero()
	w.t.Cleanup(func() {
		if w.t.Failed() {
			w.t.Logf("work left: %s", w.workLeft())
			w.logPushesLeft()
		}
	})
	w.c.waitFor("the workload's work to run out", 4*time.Minute, func() bool {
		if !restarted && time.Since(lastKill) > asynqRecovery {
			w.workersMu.Lock()
			w.c.stop(w.workers[0])
			w.workers[0] = w.c.start("worker")
			w.workersMu.Unlock()
			restarted = true
		}
		left := w.workLeft()
		return left == "" && restarted
	})
}

// workLeft says what work is still to run, "" when none is.
func (w *chaosWorld) workLeft() string {
	var left []string
	for what, q := range map[string]string{
		"pending payments":        `SELECT count(*) FROM payments WHERE status = 'pending'`,
		"Stripe notices":          `SELECT count(*) FROM payment_events WHERE done_at IS NULL`,
		"charges to return":       `SELECT count(*) FROM payments WHERE status = 'succeeded' AND order_id IS NULL`,
		"card refunds":            `SELECT count(*) FROM refunds WHERE card_status = 'pending'`,
		"pushes":                  `SELECT count(*) FROM order_steps s WHERE s.event = 'order.transfer_started' AND NOT EXISTS (SELECT 1 FROM order_steps e WHERE e.push_id = s.id AND e.event <> 'transfer.requested')`,
		"webhook deliveries":      `SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'`,
		"settlement runs running": `SELECT count(*) FROM settlement_runs WHERE status NOT IN ('done', 'failed')`,
	} {
		var n int64
		if err := w.c.db.Raw(q).Scan(&n).Error; err != nil {
			w.t.Fatalf("%s: %v", what, err)
		}
		if n > 0 {
			left = append(left, fmt.Sprintf("%d %s", n, what))
		}
	}
	slices.Sort(left)
	return strings.Join(left, ", ")
}

// logPushesLeft logs, for each push not settled, its steps, its outbox
// entry and the state asynq has its task in: what a failed run needs to
// tell a lost task from a slow one.
func (w *chaosWorld) logPushesLeft() {
	var entries []models.OutboxEntry
	w.c.db.Where("task_type = ?", tasks.TypeTransferPush).Find(&entries)
	inspector := asynq.NewInspectorFromRedisClient(w.c.redis.Client)
	for _, e := range entries {
		var p tasks.TransferPushPayload
		json.Unmarshal(e.Payload, &p)
		var steps []models.OrderStep
		w.c.db.Where("order_id = ?", p.OrderID).Order("id").Find(&steps)
		settled := slices.ContainsFunc(steps, func(s models.OrderStep) bool {
			return s.PushID != nil && *s.PushID == p.Push && s.Event != order.EventTransferRequested
		})
		if settled {
			continue
		}
		task := "no task"
		if info, err := inspector.GetTaskInfo(e.Queue, e.ID); err != nil {
			task = err.Error()
		} else {
			task = fmt.Sprintf("%s, retried %d/%d, next %s, last error %q", info.State, info.Retried, info.MaxRetry, info.NextProcessAt.Format(time.RFC3339), info.LastErr)
		}
		w.t.Logf("push %d of %s: outbox entry %s enqueued %v (%q); task %s", p.Push, p.OrderID, e.ID, e.EnqueuedAt, e.LastError, task)
		for _, s := range steps {
			w.t.Logf("  step %d %s %s -> %s %q (%s)", s.ID, s.At.Format(time.RFC3339Nano), s.Actor, s.Status, s.Event, s.Note)
		}
	}
}

// eventReceiver is the partners' webhook receiver: it answers every
// delivery 200 (sometimes slowly) and keeps the ids of the events it got;
// while down, it answers 503.
type eventReceiver struct {
	url  string
	down atomic.Bool
	mu   sync.Mutex
	seen map[string]int
}

func newEventReceiver(t *testing.T) *eventReceiver {
	r := &eventReceiver{seen: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var ev struct {
			ID string `json:"id"`
		}
		if r.down.Load() {
			rw.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if strings.HasPrefix(req.URL.Path, "/hooks/") && json.Unmarshal(body, &ev) == nil && ev.ID != "" {
			r.mu.Lock()
			r.seen[ev.ID]++
			r.mu.Unlock()
		}
		if len(body)%7 == 0 { // now and then a slow receiver
			time.Sleep(300 * time.Millisecond)
		}
		rw.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *eventReceiver) got(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[id] > 0
}
