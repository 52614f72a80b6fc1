package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/domaind/domaind/internal/canary"
	"github.com/domaind/domaind/internal/domaininfo"
	"github.com/domaind/domaind/internal/metrics"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/requestid"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestCanaryRunWritesEachStepOnce(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	c := models.Canary{ID: models.NewID(), Steps: 5}
	db.Create(&c)
	// A step left by an earlier, killed attempt.
	db.Create(&models.CanaryStep{CanaryID: c.ID, Step: 2, Attempt: 1})
	task := tasks.New(tasks.CanaryRunPayload{CanaryID: c.ID})
	h := &canaryRun{db: db, canaries: canary.New(db, nil)}
	for range 2 {
		if err := run(context.Background(), h, task); err != nil {
			t.Fatal(err)
		}
	}
	var steps []models.CanaryStep
	db.Order("step").Find(&steps)
	if len(steps) != 5 {
		t.Fatalf("steps = %d, want 5", len(steps))
	}
	for i, s := range steps {
		if s.Step != i {
			t.Errorf("step %d has number %d", i, s.Step)
		}
	}
	if steps[2].Attempt != 1 || steps[0].Attempt != 1 {
		t.Errorf("attempts of steps = %d,%d; the kept step and the first run's steps are attempt 1", steps[2].Attempt, steps[0].Attempt)
	}
	var got models.Canary
	db.First(&got, "id = ?", c.ID)
	if got.CompletedAt == nil || got.StartedAt == nil || got.Attempts != 1 {
		t.Errorf("canary = started %v completed %v attempts %d; want done after 1 attempt (the 2nd run saw it done)", got.StartedAt, got.CompletedAt, got.Attempts)
	}
}

func TestCanaryRunUnknownIsNotRetried(t *testing.T) {
	t.Parallel()
	cdb := modelstest.NewDB(t)
	h := &canaryRun{db: cdb, canaries: canary.New(cdb, nil)}
	task := tasks.New(tasks.CanaryRunPayload{CanaryID: models.NewID()})
	if err := run(context.Background(), h, task); !errors.Is(err, asynq.SkipRetry) {
		t.Errorf("err = %v, want SkipRetry", err)
	}
	if err := run(context.Background(), h, asynq.NewTask(tasks.TypeCanaryRun, []byte("{"))); !errors.Is(err, asynq.SkipRetry) {
		t.Errorf("bad payload err = %v, want SkipRetry", err)
	}
}

func TestObserveRecordsAndRecovers(t *testing.T) {
	m := metrics.New()
	var sawRequestID string
	mw := observe(quiet, m)
	ok := mw(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		sawRequestID = requestid.From(ctx)
		return nil
	}))
	boom := mw(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { panic("boom") }))

	task := asynq.NewTaskWithHeaders("test:ok", nil, map[string]string{tasks.HeaderRequestID: "rid-7"})
	if err := ok.ProcessTask(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	if sawRequestID != "rid-7" {
		t.Errorf("handler saw request id %q, want rid-7", sawRequestID)
	}
	err := boom.ProcessTask(context.Background(), asynq.NewTask("test:boom", nil))
	if err == nil || !strings.Contains(err.Error(), "panic") {
		t.Errorf("panic became %v, want an error", err)
	}
	if n := failures(t, m, "test:boom"); n != 1 {
		t.Errorf("failures of test:boom = %v, want 1", n)
	}
	if n := failures(t, m, "test:ok"); n != 0 {
		t.Errorf("failures of test:ok = %v, want 0", n)
	}
	if n := testutil.CollectAndCount(m.Registry, "domaind_task_duration_seconds"); n != 2 {
		t.Errorf("duration series = %d, want 2 (ok and error)", n)
	}
}

func TestCleanupDeletesOnlyExpiredRows(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	old := time.Now().UTC().Add(-8 * 24 * time.Hour)
	recent := time.Now().UTC().Add(-time.Hour)
	entries := map[string]models.OutboxEntry{
		"old":         {EnqueuedAt: &old},
		"recent":      {EnqueuedAt: &recent},
		"pending-old": {CreatedAt: old},
	}
	names := map[string]string{}
	for name, e := range entries {
		e.ID, e.TaskType, e.Payload, e.Queue = models.NewID(), "t", []byte{}, "q"
		if err := db.Create(&e).Error; err != nil {
			t.Fatal(err)
		}
		names[e.ID] = name
	}
	db.Create(&models.Canary{ID: "old-canary", Steps: 1, CreatedAt: old})
	db.Create(&models.CanaryStep{CanaryID: "old-canary", Step: 0, Attempt: 1})
	db.Create(&models.Canary{ID: "new-canary", Steps: 1})
	db.Create(&models.CanaryStep{CanaryID: "new-canary", Step: 0, Attempt: 1})
	db.Create(&models.Lookup{ID: "old-lookup", Domain: "a.com", State: models.LookupDone, CreatedAt: time.Now().UTC().Add(-31 * 24 * time.Hour)})
	db.Create(&models.Lookup{ID: "week-old-lookup", Domain: "a.com", State: models.LookupDone, CreatedAt: old})
	db.Create(&models.Session{TokenHash: "expired", UserID: "u", ExpiresAt: recent})
	db.Create(&models.Session{TokenHash: "live", UserID: "u", ExpiresAt: time.Now().UTC().Add(time.Hour)})
	twoDaysAgo, hourAgo := time.Now().UTC().Add(-48*time.Hour), time.Now().UTC().Add(-time.Hour)
	db.Create(&models.OAuthCode{Hash: "dead-family", ClientID: "c", UserID: "u", ExpiresAt: twoDaysAgo})
	db.Create(&models.OAuthCode{Hash: "live-family", ClientID: "c", UserID: "u", ExpiresAt: twoDaysAgo})
	db.Create(&models.OAuthToken{Hash: "long-expired", Kind: models.TokenAccess, Family: "dead-family", ExpiresAt: twoDaysAgo})
	db.Create(&models.OAuthToken{Hash: "just-expired", Kind: models.TokenAccess, Family: "live-family", ExpiresAt: hourAgo})
	db.Create(&models.OAuthClient{ID: "unused-old", RedirectURIs: []string{}, CreatedAt: twoDaysAgo})
	db.Create(&models.OAuthClient{ID: "unused-new", RedirectURIs: []string{}, CreatedAt: hourAgo})
	db.Create(&models.OAuthClient{ID: "used-old", RedirectURIs: []string{}, CreatedAt: twoDaysAgo, UsedAt: &twoDaysAgo})
	db.Create(&models.IdempotencyRecord{ID: "idem-expired", Record: []byte("x"), ExpiresAt: recent})
	db.Create(&models.IdempotencyRecord{ID: "idem-live", Record: []byte("x"), ExpiresAt: time.Now().UTC().Add(time.Hour)})

	h := &cleanup{db: db, log: quiet}
	for range 2 { // idempotent
		if err := run(context.Background(), h, tasks.New(tasks.MaintenanceCleanupPayload{})); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	db.Model(&models.OutboxEntry{}).Pluck("id", &ids)
	var left []string
	for _, id := range ids {
		left = append(left, names[id])
	}
	slices.Sort(left)
	if strings.Join(left, ",") != "pending-old,recent" {
		t.Errorf("outbox left = %v, want pending-old (never enqueued) and recent", left)
	}
	var canaries, steps []string
	db.Model(&models.Canary{}).Pluck("id", &canaries)
	db.Model(&models.CanaryStep{}).Pluck("canary_id", &steps)
	if strings.Join(canaries, ",") != "new-canary" || strings.Join(steps, ",") != "new-canary" {
		t.Errorf("canaries left = %v, steps left = %v; want only new-canary", canaries, steps)
	}
	var lookups []string
	db.Model(&models.Lookup{}).Pluck("id", &lookups)
	if strings.Join(lookups, ",") != "week-old-lookup" {
		t.Errorf("lookups left = %v, want the one within 30 days", lookups)
	}
	var sessions []string
	db.Model(&models.Session{}).Pluck("token_hash", &sessions)
	if strings.Join(sessions, ",") != "live" {
		t.Errorf("sessions left = %v, want the unexpired one", sessions)
	}
	var tokens, codes, clients []string
	db.Model(&models.OAuthToken{}).Pluck("hash", &tokens)
	db.Model(&models.OAuthCode{}).Order("hash").Pluck("hash", &codes)
	db.Model(&models.OAuthClient{}).Order("id").Pluck("id", &clients)
	if strings.Join(tokens, ",") != "just-expired" || strings.Join(codes, ",") != "live-family" ||
		strings.Join(clients, ",") != "unused-new,used-old" {
		t.Errorf("OAuth left: tokens %v, codes %v, clients %v; want just-expired, live-family, unused-new and used-old", tokens, codes, clients)
	}
	var keys []string
	db.Model(&models.IdempotencyRecord{}).Pluck("id", &keys)
	if strings.Join(keys, ",") != "idem-live" {
		t.Errorf("idempotency records left = %v, want the unexpired one", keys)
	}
}

// The cleanup deletes the expired events and their deliveries, and a
// delivery whose event is gone already (a redelivery made while its event
// was being deleted): none is left without its event.
func TestCleanupLeavesNoDeliveryWithoutItsEvent(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	expired, recent := time.Now().UTC().Add(-31*24*time.Hour), time.Now().UTC().Add(-time.Hour)
	events := []models.Event{{ID: "evt_gone"}, {ID: "evt_expired", CreatedAt: expired}, {ID: "evt_old_kept", CreatedAt: recent}, {ID: "evt_expired_later", CreatedAt: expired}}
	for i := range events {
		events[i].PartnerID, events[i].Environment, events[i].Type, events[i].Data = "prt_1", models.EnvSandbox, "test", []byte(`{}`)
		if events[i].CreatedAt.IsZero() {
			events[i].CreatedAt = recent
		}
	}
	if err := models.InsertEvents(db, events); err != nil {
		t.Fatal(err)
	}
	var deliveries []models.WebhookDelivery
	for _, ev := range events {
		deliveries = append(deliveries, models.WebhookDelivery{ID: "whd_of_" + ev.ID, EventSeq: ev.Seq, EndpointID: "whe_1", State: models.DeliveryDelivered})
	}
	if err := db.Create(&deliveries).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(&models.Event{}, "id = ?", "evt_gone").Error; err != nil {
		t.Fatal(err)
	}
	h := &cleanup{db: db, log: quiet}
	clean := func() (events, deliveries string) {
		t.Helper()
		for range 2 { // idempotent
			if err := run(context.Background(), h, tasks.New(tasks.MaintenanceCleanupPayload{})); err != nil {
				t.Fatal(err)
			}
		}
		var left, kept []string
		if err := db.Model(&models.Event{}).Order("seq").Pluck("id", &left).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Model(&models.WebhookDelivery{}).Order("id").Pluck("id", &kept).Error; err != nil {
			t.Fatal(err)
		}
		return strings.Join(left, ","), strings.Join(kept, ",")
	}
	if left, kept := clean(); left != "evt_old_kept" || kept != "whd_of_evt_old_kept" {
		t.Errorf("events left %v, deliveries left %v; want evt_old_kept and its delivery", left, kept)
	}
	// Once every event has expired, no delivery has one.
	if err := db.Model(&models.Event{}).Where("id = ?", "evt_old_kept").Update("created_at", expired).Error; err != nil {
		t.Fatal(err)
	}
	lost := models.WebhookDelivery{ID: "whd_lost", EventSeq: events[len(events)-1].Seq + 100, EndpointID: "whe_1", State: models.DeliveryPending}
	if err := db.Create(&lost).Error; err != nil {
		t.Fatal(err)
	}
	if left, kept := clean(); left != "" || kept != "" {
		t.Errorf("events left %v, deliveries left %v; want none", left, kept)
	}
}

// A delivery still pending when its event expires (a receiver failing
// for a month, an order's deliveries waiting in turn behind each other) is
// kept with its event until it settles, and settling it still releases
// the next delivery of its order; settled, they go at the next cleanup.
func TestCleanupKeepsADeliveryUntilItSettles(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	r := platformtest.NewRedis(t)
	ob := outbox.New(db, r.Client, quiet)
	t.Cleanup(func() { ob.Close() })
	receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(receiver.Close)
	webhooks := webhook.New(db, []byte("test-secret-key-0123456789abcdef"), []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, time.Now)
	ctx := context.Background()
	if _, err := webhooks.Register(ctx, "prt_1", models.EnvSandbox, receiver.URL, "whsec_receiver_0123"); err != nil {
		t.Fatal(err)
	}
	expired := time.Now().Add(-webhook.Retention - time.Hour)
	err := ob.Transaction(ctx, func(tx *outbox.Tx) error {
		_, err := webhook.EmitAll(tx, []webhook.Emission{
			{PartnerID: "prt_1", Environment: models.EnvSandbox, Subject: "ord_1", Type: "order.created", Data: 1},
			{PartnerID: "prt_1", Environment: models.EnvSandbox, Subject: "ord_1", Type: "order.completed", Data: 2},
		}, expired)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var first, second models.WebhookDelivery
	db.Order("event_seq").First(&first)
	db.Order("event_seq DESC").First(&second)

	h := &cleanup{db: db, log: quiet}
	left := func() (events, deliveries int64) {
		t.Helper()
		if err := run(ctx, h, tasks.New(tasks.MaintenanceCleanupPayload{})); err != nil {
			t.Fatal(err)
		}
		db.Model(&models.Event{}).Count(&events)
		db.Model(&models.WebhookDelivery{}).Count(&deliveries)
		return events, deliveries
	}
	if events, deliveries := left(); events != 2 || deliveries != 2 {
		t.Fatalf("while both deliveries are pending: %d events and %d deliveries left, want 2 of each", events, deliveries)
	}
	if err := webhooks.Deliver(ctx, ob, first.ID, false); err != nil {
		t.Fatal(err)
	}
	var released int64
	db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypeWebhookDeliver).
		Where("payload = ?", tasks.New(tasks.WebhookDeliverPayload{DeliveryID: second.ID}).Payload()).Count(&released)
	if released != 1 {
		t.Fatalf("the waiting delivery has %d tasks after the first was delivered, want 1", released)
	}
	if events, deliveries := left(); events != 1 || deliveries != 1 {
		t.Errorf("after the first was delivered: %d events and %d deliveries left, want the pending one with its event", events, deliveries)
	}
	if err := webhooks.Deliver(ctx, ob, second.ID, false); err != nil {
		t.Fatal(err)
	}
	if events, deliveries := left(); events != 0 || deliveries != 0 {
		t.Errorf("after both were delivered: %d events and %d deliveries left, want none", events, deliveries)
	}
}

// failures reads domaind_task_failures_total for typ from the registry.
func failures(t *testing.T, m *metrics.Metrics, typ string) float64 {
	t.Helper()
	return counter(t, m, "domaind_task_failures_total", typ)
}

// counter is the value of the counter name of task type typ.
func counter(t *testing.T, m *metrics.Metrics, name, typ string) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "type" && l.GetValue() == typ {
					return s.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// A failed webhook delivery is retried first within 15 s, then on growing
// gaps, for about three days in all, with jitter.
func TestWebhookRetrySchedule(t *testing.T) {
	task := asynq.NewTask(tasks.TypeWebhookDeliver, nil)
	spec := tasks.Specs[tasks.TypeWebhookDeliver]
	var total time.Duration
	var last time.Duration
	jittered := false
	for n := range spec.MaxRetry {
		d := retryDelay(n, errors.New("receiver answered 500"), task)
		want := spec.Schedule[n]
		if d < want*9/10 || d > want*11/10 {
			t.Fatalf("retry %d waits %v, want %v ±10%%", n+1, d, want)
		}
		if d != want {
			jittered = true
		}
		if n == 0 && d > 15*time.Second {
			t.Errorf("first retry after %v, want within 15 s", d)
		}
		if want < last {
			t.Errorf("retry %d waits less (%v) than the one before (%v)", n+1, want, last)
		}
		last, total = want, total+d
	}
	if total < 60*time.Hour || total > 84*time.Hour {
		t.Errorf("the schedule spans %v, want about three days", total)
	}
	if !jittered {
		t.Error("no retry was jittered")
	}
	if d := retryDelay(3, asynq.ErrLeaseExpired, task); d != time.Second {
		t.Errorf("a delivery whose worker died waits %v, want 1 s", d)
	}
}

// run passes t to h as the worker's mux does: decoded once, into h's
// payload type.
func run[P tasks.Payload](ctx context.Context, h Handler[P], t *asynq.Task) error {
	mux := asynq.NewServeMux()
	Handle(mux, h)
	return mux.ProcessTask(ctx, t)
}

// A task run again after its work was done (a redelivery after a crash or
// a Redis outage) changes nothing and is counted as found done; the first
// run is not.
func TestRunsThatFindTheirWorkDoneAreCounted(t *testing.T) {
	t.Parallel()
	rdapSrc := &source{answers: map[string]domaininfo.Record{"example.com": {Domain: "example.com", Registrar: "R", Source: domaininfo.SourceRDAP}}}
	h, _ := newLookupRun(t, rdapSrc, &source{})
	_, task := addLookup(t, h, "example.com")
	m := metrics.New()
	mux := asynq.NewServeMux()
	mux.Use(observe(quiet, m))
	Handle(mux, h)
	foundDone := func() float64 { return counter(t, m, "domaind_task_found_done_total", tasks.TypeLookupRun) }
	if err := mux.ProcessTask(context.Background(), task); err != nil || foundDone() != 0 {
		t.Fatalf("first run = %v, found done %v; want done, not counted", err, foundDone())
	}
	if err := mux.ProcessTask(context.Background(), task); err != nil || foundDone() != 1 || rdapSrc.calls != 1 {
		t.Errorf("second run = %v, found done %v, RDAP asked %d times; want it counted and nothing asked again", err, foundDone(), rdapSrc.calls)
	}
}

// A money-returning task gives up, for ops to pay back by hand, only on
// its last attempt and never when the refund was made and only its record
// failed.
func TestGivesUpNeverOnARefundMadeButNotRecorded(t *testing.T) {
	t.Parallel()
	failed := errors.New("the processor is down")
	notRecorded := fmt.Errorf("refund rfd_1 went back to the card: %w: %w", payment.ErrNotRecorded, errors.New("database down"))
	for _, tc := range []struct {
		last bool
		err  error
		want bool
	}{
		{true, failed, true},
		{false, failed, false},
		{true, notRecorded, false},
		{true, nil, false},
	} {
		if got := givesUp(tc.last, tc.err); got != tc.want {
			t.Errorf("givesUp(last %v, %v) = %v, want %v", tc.last, tc.err, got, tc.want)
		}
	}
}
