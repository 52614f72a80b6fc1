package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/internal/domaininfo"
	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

// source is a lookup.Source answering from a table and counting its calls;
// it stands for the RDAP and WHOIS clients, which have their own tests
// against recorded servers.
type source struct {
	answers map[string]domaininfo.Record
	err     error
	calls   int
	onCall  func() // called with each lookup, when set
	hang    bool   // answer nothing until the lookup's context ends
}

func (s *source) Lookup(ctx context.Context, domain string) (domaininfo.Record, error) {
	s.calls++
	if s.onCall != nil {
		s.onCall()
	}
	if s.hang {
		<-ctx.Done()
		return domaininfo.Record{}, fmt.Errorf("rdap: %w", ctx.Err())
	}
	if s.err != nil {
		return domaininfo.Record{}, s.err
	}
	if r, ok := s.answers[domain]; ok {
		return r, nil
	}
	return domaininfo.Record{}, domaininfo.ErrNotFound
}

func newLookupRun(t *testing.T, rdapSrc, whoisSrc *source) (*lookupRun, *lookup.Cache) {
	db := modelstest.NewDB(t)
	cache := lookup.NewCache(platformtest.NewRedis(t).Client, slog.New(slog.DiscardHandler))
	t.Cleanup(cache.Close)
	return &lookupRun{db: db, resolver: &lookup.Resolver{RDAP: rdapSrc, Fallback: whoisSrc}, cache: cache}, cache
}

func addLookup(t *testing.T, h *lookupRun, domain string) (models.Lookup, *asynq.Task) {
	l := models.Lookup{ID: models.NewID(), Domain: domain, State: models.LookupPending}
	if err := h.db.Create(&l).Error; err != nil {
		t.Fatal(err)
	}
	task := tasks.New(tasks.LookupRunPayload{LookupID: l.ID})
	return l, task
}

func TestLookupRunFinishesOnceAndCaches(t *testing.T) {
	t.Parallel()
	rdapSrc := &source{answers: map[string]domaininfo.Record{"example.com": {Domain: "example.com", Registrar: "R", Source: domaininfo.SourceRDAP}}}
	h, cache := newLookupRun(t, rdapSrc, &source{})
	l, task := addLookup(t, h, "example.com")
	ctx := context.Background()
	for range 2 { // the second run is a redelivery after the row was written
		if err := run(ctx, h, task); err != nil {
			t.Fatal(err)
		}
	}
	if rdapSrc.calls != 1 {
		t.Errorf("RDAP asked %d times, want 1", rdapSrc.calls)
	}
	var got models.Lookup
	h.db.First(&got, "id = ?", l.ID)
	if got.State != models.LookupDone || got.Record.Registrar != "R" || got.CompletedAt == nil || got.Attempts != 1 {
		t.Errorf("row = %+v", got)
	}
	a, ok, err := cache.Get(ctx, "example.com")
	if err != nil || !ok || a.LookupID != l.ID || !a.Found || a.Record.Registrar != "R" {
		t.Errorf("cache = %+v %v %v", a, ok, err)
	}
}

func TestLookupRunFallsBackAndRecordsNotFound(t *testing.T) {
	t.Parallel()
	rdapSrc := &source{err: errors.New("rdap: no RDAP server")}
	whoisSrc := &source{answers: map[string]domaininfo.Record{"found.io": {Domain: "found.io", Source: domaininfo.SourceFallback}}}
	h, cache := newLookupRun(t, rdapSrc, whoisSrc)
	found, t1 := addLookup(t, h, "found.io")
	missing, t2 := addLookup(t, h, "missing.io")
	for _, task := range []*asynq.Task{t1, t2} {
		if err := run(context.Background(), h, task); err != nil {
			t.Fatal(err)
		}
	}
	var a, b models.Lookup
	h.db.First(&a, "id = ?", found.ID)
	h.db.First(&b, "id = ?", missing.ID)
	if a.State != models.LookupDone || a.Record.Source != domaininfo.SourceFallback || b.State != models.LookupNotFound {
		t.Errorf("states = %s (%s), %s", a.State, a.Record.Source, b.State)
	}
	if ans, ok, _ := cache.Get(context.Background(), "missing.io"); !ok || ans.Found {
		t.Errorf("not-found answer not cached: %+v %v", ans, ok)
	}
}

// A lookup whose registries keep failing is tried once and again after
// each of its retries, within the task, then fails for good: the row says
// so, the waiting caller is told, and asynq does not run it again.
func TestLookupRunRetriesThenFails(t *testing.T) {
	t.Parallel()
	broken := &source{err: errors.New("connection refused")}
	h, cache := newLookupRun(t, broken, broken)
	h.retries = []time.Duration{0, 0, 0}
	l, task := addLookup(t, h, "down.com")
	sub, err := cache.Subscribe(context.Background(), l.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()

	if err := run(context.Background(), h, task); !errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("failure = %v, want a final one (SkipRetry)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := sub.Wait(ctx, time.Minute); err != nil {
		t.Fatalf("no announcement of the failed lookup: %v", err)
	}
	var got models.Lookup
	h.db.First(&got, "id = ?", l.ID)
	if got.State != models.LookupFailed || !strings.Contains(got.Error, "connection refused") || got.Attempts != 4 {
		t.Errorf("row = state %s error %q attempts %d, want failed after 1+3 attempts", got.State, got.Error, got.Attempts)
	}
	if broken.calls != 8 {
		t.Errorf("registries asked %d times, want RDAP and WHOIS 4 times each", broken.calls)
	}
}

// A search's warm-up that fails for good (the registries cannot be
// reached, as offline) is recorded as failed on its row, and its task ends
// without an error: it is not a failure for the queue's error rate or the
// archive, since nobody asked for it.
func TestLookupRunWarmUpFailureIsTheRowsAlone(t *testing.T) {
	t.Parallel()
	broken := &source{err: errors.New("no such host")}
	h, _ := newLookupRun(t, broken, broken)
	h.retries = []time.Duration{0}
	l, _ := addLookup(t, h, "offline.com")
	task := tasks.New(tasks.LookupRunPayload{LookupID: l.ID, Background: true})
	if err := run(context.Background(), h, task); err != nil {
		t.Fatalf("a failed warm-up = %v, want the task done", err)
	}
	var got models.Lookup
	h.db.First(&got, "id = ?", l.ID)
	if got.State != models.LookupFailed || !strings.Contains(got.Error, "no such host") {
		t.Errorf("row = state %s error %q, want failed with the reason", got.State, got.Error)
	}
}

// A worker that stops while a lookup waits to retry leaves it pending, for
// asynq to run again: the registries' failure was not final.
func TestLookupRunStoppedBetweenAttemptsStaysPending(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	broken := &source{err: errors.New("connection refused"), onCall: stop}
	h, _ := newLookupRun(t, broken, &source{err: errors.New("timeout")})
	h.retries = []time.Duration{time.Hour}
	l, task := addLookup(t, h, "down.com")
	if err := run(ctx, h, task); err == nil || errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("stopped = %v, want a retryable error", err)
	}
	var got models.Lookup
	h.db.First(&got, "id = ?", l.ID)
	if got.State != models.LookupPending || got.Attempts != 1 {
		t.Errorf("row = state %s attempts %d, want pending after 1 attempt", got.State, got.Attempts)
	}
}

// A lookup whose registries do not answer within its task's time fails
// in that task, with its outcome recorded before the deadline: cut off by
// it, the lookup stayed pending, and asynq and then the rescue ran it
// again for as long as the registries stayed silent.
func TestLookupRunOutOfTimeFails(t *testing.T) {
	t.Parallel()
	silent := &source{hang: true}
	h, cache := newLookupRun(t, silent, silent)
	h.retries = []time.Duration{0, 0, 0}
	l, task := addLookup(t, h, "silent.com")
	sub, err := cache.Subscribe(context.Background(), l.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), finishMargin+200*time.Millisecond) // as asynq sets the task's
	defer cancel()
	if err := run(ctx, h, task); !errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("a lookup out of time = %v, want a final failure (SkipRetry)", err)
	}
	if err := sub.Wait(ctx, time.Minute); err != nil {
		t.Fatalf("no announcement of the failed lookup: %v", err)
	}
	var got models.Lookup
	h.db.First(&got, "id = ?", l.ID)
	if got.State != models.LookupFailed || !strings.Contains(got.Error, "no answer within") || got.CompletedAt == nil {
		t.Errorf("row = state %s error %q, want failed for want of an answer", got.State, got.Error)
	}
}

func TestLookupRunUnknownIsNotRetried(t *testing.T) {
	t.Parallel()
	h, _ := newLookupRun(t, &source{}, &source{})
	task := tasks.New(tasks.LookupRunPayload{LookupID: models.NewID()})
	if err := run(context.Background(), h, task); !errors.Is(err, asynq.SkipRetry) {
		t.Errorf("err = %v, want SkipRetry", err)
	}
}

func TestRetryDelay(t *testing.T) {
	lookupTask := tasks.New(tasks.LookupRunPayload{LookupID: "x"})
	canaryTask := tasks.New(tasks.CanaryRunPayload{CanaryID: "x"})
	syncTask := tasks.New(tasks.TLDSyncPayload{})
	tests := []struct {
		name string
		n    int
		err  error
		task *asynq.Task
		want time.Duration
	}{
		{"worker died", 3, asynq.ErrLeaseExpired, canaryTask, time.Second},
		{"first lookup retry", 0, errors.New("x"), lookupTask, time.Second},
		{"third lookup retry", 2, errors.New("x"), lookupTask, 4 * time.Second},
		{"first canary retry", 0, errors.New("x"), canaryTask, 10 * time.Second},
	}
	for _, tc := range tests {
		if got := retryDelay(tc.n, tc.err, tc.task); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := retryDelay(0, errors.New("x"), syncTask); got < 10*time.Second {
		t.Errorf("TLD sync retry in %v, want asynq's default (at least 10 s)", got)
	}
	// A delivery's wait follows the larger of asynq's count and its own,
	// within the jitter: the rescue hands a task back with asynq's at 0.
	deliverTask := tasks.New(tasks.WebhookDeliverPayload{DeliveryID: "x"})
	for _, tc := range []struct {
		name string
		n    int
		err  error
		want time.Duration
	}{
		{"first delivery retry", 0, &webhook.RetryError{}, tasks.WebhookSchedule[0]},
		{"a handed-back delivery's retry", 0, fmt.Errorf("wrapped: %w", &webhook.RetryError{Failures: 12}), tasks.WebhookSchedule[12]},
		{"a delivery's retry asynq counts further", 12, &webhook.RetryError{Failures: 3}, tasks.WebhookSchedule[12]},
	} {
		got := retryDelay(tc.n, tc.err, deliverTask)
		if lo, hi := tc.want-tc.want/10, tc.want+tc.want/10; got < lo || got > hi {
			t.Errorf("%s: %v, want %v ±10 %%", tc.name, got, tc.want)
		}
	}
}
