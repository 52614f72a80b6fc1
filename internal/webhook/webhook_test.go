package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/internal/hmacsig"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

const receiverSecret = "whsec-0123456789abcdef"

type world struct {
	s     *Service
	ob    *outbox.Outbox
	redis *platformtest.Redis
}

func newWorld(t *testing.T) *world {
	t.Helper()
	db := modelstest.NewDB(t)
	r := platformtest.NewRedis(t)
	ob := outbox.New(db, r.Client, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { ob.Close() })
	s := New(db, []byte("test-secret-key-0123456789abcdef"), []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}, time.Now)
	return &world{s: s, ob: ob, redis: r}
}

// newPostgresWorld is newWorld for a test that reads Postgres's plans,
// and its database; elsewhere the test is skipped, saying where the rest
// of what it checks is tested (covered).
func newPostgresWorld(t *testing.T, covered string) (*world, *gorm.DB) {
	t.Helper()
	w := newWorld(t)
	if !models.IsPostgres(w.s.db) {
		t.Skip("reads Postgres's plan; " + covered)
	}
	return w, w.s.db
}

// receiver serves h on 127.0.0.2, the network the tests' guard allows.
func receiver(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/hook"
}

// register registers url as partner's endpoint in env, signed with
// receiverSecret, and fails the test if it cannot.
func (w *world) register(t *testing.T, partner, env, url string) models.WebhookEndpoint {
	t.Helper()
	e, err := w.s.Register(context.Background(), partner, env, url, receiverSecret)
	if err != nil {
		t.Fatalf("register %s's %s endpoint %s: %v", partner, env, url, err)
	}
	return e
}

func (w *world) emit(t *testing.T, partner, env, typ string) models.Event {
	t.Helper()
	return w.emitAbout(t, partner, env, "", typ)
}

func (w *world) emitAbout(t *testing.T, partner, env, subject, typ string) models.Event {
	t.Helper()
	var ev models.Event
	err := w.ob.Transaction(context.Background(), func(tx *outbox.Tx) error {
		var err error
		ev, err = Emit(tx, partner, env, subject, typ, map[string]string{"hello": "partner"}, time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func (w *world) deliveries(t *testing.T, ev models.Event) []models.WebhookDelivery {
	t.Helper()
	var ds []models.WebhookDelivery
	w.s.db.Where("event_seq = ?", ev.Seq).Order("created_at").Find(&ds)
	return ds
}

// delivery is the id of ev's one delivery.
func (w *world) delivery(t *testing.T, ev models.Event) string {
	t.Helper()
	ds := w.deliveries(t, ev)
	if len(ds) != 1 {
		t.Fatalf("event %s has %d deliveries, want one", ev.ID, len(ds))
	}
	return ds[0].ID
}

func codeOf(err error) fault.Code {
	if e, ok := fault.As(err); ok {
		return e.Code
	}
	return ""
}

func TestRegisterChecksTheURLAndTheSecret(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	for name, tc := range map[string]struct{ env, url, secret, field string }{
		"plain http on the internet, live": {models.EnvLive, "http://93.184.216.34/hook", receiverSecret, "url"},
		"plain http to loopback, sandbox":  {models.EnvSandbox, "http://127.0.0.1/hook", receiverSecret, "url"},
		"loopback":                         {models.EnvSandbox, "https://127.0.0.1/hook", receiverSecret, "url"},
		"cloud metadata":                   {models.EnvSandbox, "https://169.254.169.254/latest", receiverSecret, "url"},
		"not a URL":                        {models.EnvSandbox, "receiver", receiverSecret, "url"},
		"short secret":                     {models.EnvSandbox, "http://127.0.0.2/hook", "short", "secret"},
	} {
		_, err := w.s.Register(ctx, "prt_1", tc.env, tc.url, tc.secret)
		if e, ok := fault.As(err); !ok || e.Code != fault.Validation || e.Field != tc.field {
			t.Errorf("%s: %v, want a validation error on %s", name, err, tc.field)
		}
	}
	e, err := w.s.Register(ctx, "prt_1", models.EnvSandbox, "http://127.0.0.2:9/hook", receiverSecret)
	if err != nil || !e.Active {
		t.Fatalf("a test network's endpoint = %+v, %v", e, err)
	}
	again, err := w.s.Register(ctx, "prt_1", models.EnvSandbox, "http://127.0.0.2:10/hook", receiverSecret)
	if err != nil || again.ID != e.ID || again.URL != "http://127.0.0.2:10/hook" {
		t.Errorf("registering again = %+v, %v; want the same endpoint, updated", again, err)
	}
	// Test mode takes plain http on the internet, as payment processors do.
	if e, err := w.s.Register(ctx, "prt_2", models.EnvSandbox, "http://93.184.216.34/hook", receiverSecret); err != nil || e.URL != "http://93.184.216.34/hook" {
		t.Errorf("a sandbox endpoint on plain http = %+v, %v; want it registered", e, err)
	}
}

// tableDNS answers names from a table and nothing else, as a resolver
// that knows no other name would; a name whose answer is "timeout" gets
// no answer in time.
type tableDNS map[string]string

func (d tableDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := d[strings.TrimSuffix(host, ".")]; ok {
		if a == "timeout" {
			return nil, &net.DNSError{Err: "i/o timeout on 10.0.0.53:53", Name: host, IsTimeout: true}
		}
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// Registering a URL tells a partner nothing of the service's own network:
// a name that is not under a public suffix is refused as written, and a
// public name that does not resolve gets the same words as one that
// resolves to a private address; a name whose DNS did not answer is to be
// tried again, in words that name no resolver. A public name resolving to
// a public address is registered.
func TestRegisterTellsNothingOfTheNetwork(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	dns := tableDNS{"intranet": "93.184.216.34", "inside.example.com": "10.1.2.3", "hooks.example.com": "93.184.216.34",
		"slow.example.com": "timeout"}
	w.s.fetch = fetch.New(fetch.Options{Resolver: dns, NoRedirects: true})
	w.s.names = w.s.fetch.HidingNames()
	ctx := context.Background()
	refusal := func(raw string) string {
		t.Helper()
		_, err := w.s.Register(ctx, "prt_1", models.EnvLive, raw, receiverSecret)
		e, ok := fault.As(err)
		if !ok || e.Code != fault.Validation || e.Field != "url" {
			t.Fatalf("registering %s = %v, want a validation error on url", raw, err)
		}
		u, _ := url.Parse(raw)
		return strings.ReplaceAll(e.Message, u.Hostname(), "HOST") // the words, whatever the name
	}
	if got := refusal("https://intranet/hook"); !strings.Contains(got, "not an IP address or a name under a public suffix") {
		t.Errorf("a name of no public suffix: %q", got)
	}
	missing, inside := refusal("https://nowhere.example.com/hook"), refusal("https://inside.example.com/hook")
	if missing != inside {
		t.Errorf("a missing name says %q, a name inside %q; want the same words", missing, inside)
	}
	if got := refusal("https://slow.example.com/hook"); !strings.Contains(got, "try again later") || strings.Contains(got, "10.0.0.53") {
		t.Errorf("a name whose DNS did not answer: %q", got)
	}
	if e, err := w.s.Register(ctx, "prt_1", models.EnvLive, "https://hooks.example.com/hook", receiverSecret); err != nil || !e.Active {
		t.Errorf("a public name = %+v, %v; want it registered", e, err)
	}
}

// A receiver that fails twice and then answers gets the same event, signed
// the same way, each time; the delivery ends delivered.
func TestDeliveryRetriesWithTheSameEvent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var mu sync.Mutex
	var ids []string
	var bodies [][]byte
	url := receiver(t, func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !hmacsig.VerifyWebhook([]byte(receiverSecret), body, r.Header.Get(hmacsig.HeaderSignature)) {
			t.Errorf("delivery with a bad signature %q", r.Header.Get(hmacsig.HeaderSignature))
		}
		mu.Lock()
		defer mu.Unlock()
		ids, bodies = append(ids, r.Header.Get(HeaderEventID)), append(bodies, body)
		if len(ids) <= 2 {
			rw.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	ctx := context.Background()
	w.register(t, "prt_1", models.EnvSandbox, url)
	ev := w.emit(t, "prt_1", models.EnvSandbox, TypeTest)
	ds := w.deliveries(t, ev)
	if len(ds) != 1 {
		t.Fatalf("%d deliveries for one event, want 1", len(ds))
	}
	var entry models.OutboxEntry
	if err := w.s.db.Take(&entry, "task_type = ?", tasks.TypeWebhookDeliver).Error; err != nil || !strings.Contains(string(entry.Payload), ds[0].ID) {
		t.Errorf("the delivery's task = %+v, %v; want one in the outbox", entry, err)
	}
	for i := range 2 {
		if err := w.s.Deliver(ctx, w.ob, ds[0].ID, false); !errors.Is(err, ErrRetry) {
			t.Fatalf("attempt %d = %v, want a retry", i+1, err)
		}
	}
	if err := w.s.Deliver(ctx, w.ob, ds[0].ID, false); err != nil {
		t.Fatalf("third attempt = %v", err)
	}
	again, foundDone := tasks.TrackFoundDone(ctx)
	if err := w.s.Deliver(again, w.ob, ds[0].ID, false); err != nil || !foundDone() {
		t.Fatalf("a delivery run again after success = %v (found done %v), want nothing done, and said so", err, foundDone())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 3 || ids[0] != ev.ID || ids[1] != ev.ID || ids[2] != ev.ID || string(bodies[0]) != string(bodies[2]) {
		t.Errorf("received event ids %v, want %s three times with one body", ids, ev.ID)
	}
	var env Envelope
	if err := json.Unmarshal(bodies[2], &env); err != nil || env.ID != ev.ID || env.Type != TypeTest || env.PartnerID != "prt_1" || env.Environment != models.EnvSandbox {
		t.Errorf("envelope = %+v, %v", env, err)
	}
	var d models.WebhookDelivery
	w.s.db.Take(&d, "id = ?", ds[0].ID)
	if d.State != models.DeliveryDelivered || d.Attempts != 3 || d.DeliveredAt == nil {
		t.Errorf("delivery = %+v, want delivered after 3 attempts", d)
	}
}

// A redirect is not an acknowledgement: the delivery is not followed to
// another address (where a POST would become a GET).
func TestARedirectFailsTheAttempt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var followed atomic.Bool
	url := receiver(t, func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hook" {
			followed.Store(true)
			return
		}
		http.Redirect(rw, r, "/elsewhere", http.StatusFound)
	})
	ctx := context.Background()
	w.register(t, "prt_1", models.EnvLive, url)
	ev := w.emit(t, "prt_1", models.EnvLive, TypeTest)
	err := w.s.Deliver(ctx, w.ob, w.deliveries(t, ev)[0].ID, false)
	if !errors.Is(err, ErrRetry) || !strings.Contains(err.Error(), "302") {
		t.Errorf("attempt at a redirecting receiver = %v, want a retry for the 302", err)
	}
	if followed.Load() {
		t.Error("the redirect was followed")
	}
}

// A receiver that does not answer within the timeout fails the attempt.
func TestAHangingReceiverFailsTheAttempt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	release := make(chan struct{})
	url := receiver(t, func(rw http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	ctx := context.Background()
	w.register(t, "prt_1", models.EnvLive, url)
	ev := w.emit(t, "prt_1", models.EnvLive, TypeTest)
	start := time.Now()
	err := w.s.Deliver(ctx, w.ob, w.deliveries(t, ev)[0].ID, false)
	if !errors.Is(err, ErrRetry) || !strings.Contains(err.Error(), "no answer within 5s") {
		t.Errorf("attempt at a hanging receiver = %v, want a retry for no answer", err)
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("the attempt took %v", took) // a bound for a failing run, not a timing assertion
	}
}

// A delivery that has failed as many times as its schedule retries fails
// for good on its next failure, though its task counts no retry yet: the
// rescue handed the task back to Redis, and asynq's count began again.
// One a failure short is retried, its error saying its failures, which
// set the next wait.
func TestADeliveryOutOfAttemptsFailsForGoodWhateverItsTaskCounts(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	url := receiver(t, func(rw http.ResponseWriter, r *http.Request) { rw.WriteHeader(http.StatusServiceUnavailable) })
	ctx := context.Background()
	w.register(t, "prt_1", models.EnvLive, url)
	w.register(t, "prt_2", models.EnvLive, url)
	worn, fresh := w.delivery(t, w.emit(t, "prt_1", models.EnvLive, TypeTest)), w.delivery(t, w.emit(t, "prt_2", models.EnvLive, TypeTest))
	w.s.db.Model(&models.WebhookDelivery{}).Where("id = ?", worn).Update("attempts", len(tasks.WebhookSchedule))
	w.s.db.Model(&models.WebhookDelivery{}).Where("id = ?", fresh).Update("attempts", len(tasks.WebhookSchedule)-1)
	if err := w.s.Deliver(ctx, w.ob, worn, false); err != nil {
		t.Errorf("an attempt past the schedule = %v, want the delivery settled", err)
	}
	var retry *RetryError
	if err := w.s.Deliver(ctx, w.ob, fresh, false); !errors.As(err, &retry) || !errors.Is(err, ErrRetry) || retry.Failures != len(tasks.WebhookSchedule)-1 {
		t.Errorf("an attempt within the schedule = %#v, want a retry after %d failures", err, len(tasks.WebhookSchedule)-1)
	}
	for id, want := range map[string]string{worn: models.DeliveryFailed, fresh: models.DeliveryPending} {
		var d models.WebhookDelivery
		w.s.db.Take(&d, "id = ?", id)
		if d.State != want || d.LastStatus != http.StatusServiceUnavailable {
			t.Errorf("delivery %s is %s after a 503 (last status %d), want %s", id, d.State, d.LastStatus, want)
		}
	}
}

// Deliveries that fail for good, MaxFailures in a row, set the endpoint
// inactive: later events are kept for the history but not delivered, until
// the partner registers the endpoint again.
func TestAnEndpointThatKeepsFailingGoesInactive(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	url := receiver(t, func(rw http.ResponseWriter, r *http.Request) { rw.WriteHeader(http.StatusInternalServerError) })
	ctx := context.Background()
	w.register(t, "prt_1", models.EnvLive, url)
	for i := range MaxFailures {
		ev := w.emit(t, "prt_1", models.EnvLive, TypeTest)
		if err := w.s.Deliver(ctx, w.ob, w.deliveries(t, ev)[0].ID, true); err != nil {
			t.Fatalf("final attempt %d = %v, want the delivery settled", i+1, err)
		}
	}
	e, _ := w.s.Endpoint(ctx, "prt_1", models.EnvLive)
	if e.Active || e.Failures != MaxFailures {
		t.Fatalf("endpoint after %d failed deliveries = active %v, failures %d", MaxFailures, e.Active, e.Failures)
	}
	ev := w.emit(t, "prt_1", models.EnvLive, TypeTest)
	if n := len(w.deliveries(t, ev)); n != 0 {
		t.Errorf("%d deliveries to an inactive endpoint", n)
	}
	if _, err := w.s.Redeliver(ctx, w.ob, "prt_1", models.EnvLive, ev.ID); codeOf(err) != fault.Conflict {
		t.Errorf("redeliver to an inactive endpoint = %v, want conflict", err)
	}
	w.register(t, "prt_1", models.EnvLive, url)
	id, err := w.s.Redeliver(ctx, w.ob, "prt_1", models.EnvLive, ev.ID)
	if err != nil || id == "" {
		t.Errorf("redeliver after registering again = %q, %v", id, err)
	}
	if _, err := w.s.Redeliver(ctx, w.ob, "prt_2", models.EnvLive, ev.ID); codeOf(err) != fault.NotFound {
		t.Errorf("another partner redelivering = %v, want not_found", err)
	}
}

// The history is the partner's own events of one environment, oldest
// first, walked with after_id.
func TestHistoryWalk(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	var mine []string
	for i := range 7 {
		mine = append(mine, w.emit(t, "prt_1", models.EnvSandbox, TypeTest).ID)
		w.emit(t, "prt_1", models.EnvLive, TypeTest)
		if i%2 == 0 {
			w.emit(t, "prt_2", models.EnvSandbox, TypeTest)
		}
	}
	var walked []string
	after := ""
	for page := 0; page < 10; page++ {
		events, err := w.s.History(ctx, "prt_1", models.EnvSandbox, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) == 0 {
			break
		}
		for _, ev := range events {
			walked = append(walked, ev.ID)
		}
		after = events[len(events)-1].ID
	}
	if strings.Join(walked, ",") != strings.Join(mine, ",") {
		t.Errorf("walked %v, want %v", walked, mine)
	}
	other, _ := w.s.History(ctx, "prt_2", models.EnvSandbox, "", 50)
	if _, err := w.s.History(ctx, "prt_1", models.EnvSandbox, other[0].ID, 50); codeOf(err) != fault.Validation {
		t.Errorf("after another partner's event = %v, want validation_error", err)
	}
	// A partner that last polled before the retention holds the id of an
	// event deleted since: it goes on from the oldest event kept. An id
	// of no event made within the retention is not the partner's.
	events, err := w.s.History(ctx, "prt_1", models.EnvSandbox, models.SortedIDAt("evt_", time.Now().Add(-Retention-time.Hour)), 50)
	if err != nil || len(events) != len(mine) || events[0].ID != mine[0] {
		t.Errorf("after an event past the retention = %d events, %v; want all %d kept", len(events), err, len(mine))
	}
	for _, id := range []string{models.SortedIDAt("evt_", time.Now().Add(-Retention+time.Hour)), "evt_zz", "evt_" + strings.Repeat("0", 24) + "0"} {
		if _, err := w.s.History(ctx, "prt_1", models.EnvSandbox, id, 50); codeOf(err) != fault.Validation {
			t.Errorf("after %s = %v, want validation_error", id, err)
		}
	}
}

// A read of the history waits for the transactions recording the
// partner's events: an event that took its seq before another's and
// commits after it is not passed by, as the next page starts after the
// last event read.
func TestHistoryWaitsForEventsBeingRecorded(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if !models.IsPostgres(w.s.db) {
		t.Skip("on SQLite one transaction writes at a time: events commit in their seqs' order")
	}
	ctx := context.Background()
	var first models.Event
	recorded, release, committed := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		committed <- w.ob.Transaction(ctx, func(tx *outbox.Tx) error {
			var err error
			first, err = Emit(tx, "prt_1", models.EnvSandbox, "", TypeTest, nil, time.Now())
			close(recorded)
			<-release
			return err
		})
	}()
	<-recorded
	second := w.emit(t, "prt_1", models.EnvSandbox, TypeTest) // a greater seq, committed first

	type page struct {
		events []models.Event
		err    error
	}
	read := make(chan page, 1)
	go func() {
		events, err := w.s.History(ctx, "prt_1", models.EnvSandbox, "", 50)
		read <- page{events, err}
	}()
	// Release the first transaction once the read waits for it, or has
	// answered without waiting.
	lock := models.EventsLock("prt_1", models.EnvSandbox)
	var got *page
	for deadline := time.Now().Add(10 * time.Second); got == nil; time.Sleep(5 * time.Millisecond) {
		select {
		case p := <-read:
			got = &p
			continue
		default:
		}
		var waiting int64
		w.s.db.Raw(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = ? AND objid = ? AND objsubid = 1 AND NOT granted`,
			uint32(lock>>32), uint32(lock)).Scan(&waiting)
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the read neither waited nor answered")
		}
	}
	close(release)
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
	if got == nil {
		p := <-read
		got = &p
	}
	var ids []string
	for _, ev := range got.events {
		ids = append(ids, ev.ID)
	}
	if want := []string{first.ID, second.ID}; got.err != nil || !slices.Equal(ids, want) {
		t.Errorf("the history read while the first event was being recorded = %v, %v; want %v (seqs %d, %d)", ids, got.err, want, first.Seq, second.Seq)
	}
}

// A page of the history reads the partner's own events and no other's:
// a partner with three events among thousands of another's gets its page
// from an index scan that skips nothing and sorts nothing.
func TestHistoryPageReadsOnlyThePartnersEvents(t *testing.T) {
	t.Parallel()
	w, db := newPostgresWorld(t, "the query is the same on SQLite (TestHistoryWalk)")
	now := time.Now().UTC()
	var events []models.Event
	for i := range 3000 {
		partner := "prt_big"
		if i%1000 == 0 {
			partner = "prt_small"
		}
		events = append(events, models.Event{ID: fmt.Sprintf("evt_%d", i), PartnerID: partner, Environment: models.EnvSandbox,
			Type: TypeTest, Data: []byte(`{}`), CreatedAt: now})
	}
	if err := models.InsertEvents(db, events); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("ANALYZE events").Error; err != nil {
		t.Fatal(err)
	}
	queries := modelstest.CaptureQueries(t, db, `FROM "events"`)
	page, err := w.s.History(context.Background(), "prt_small", models.EnvSandbox, "", 50)
	if err != nil || len(page) != 3 || len(queries()) != 1 {
		t.Fatalf("history = %d events, %v, by %q; want the small partner's 3, by one query", len(page), err, queries())
	}
	modelstest.ReadsByIndex(t, db, queries()[0], "idx_events_partner_env_seq")
}

func TestSendTest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	if _, err := w.s.SendTest(ctx, w.ob, "prt_1", models.EnvSandbox); codeOf(err) != fault.Conflict {
		t.Errorf("a test event without an endpoint = %v, want a conflict", err)
	}
	var n int64
	w.s.db.Model(&models.Event{}).Count(&n)
	if n != 0 {
		t.Errorf("a refused test event left %d events", n)
	}
	url := receiver(t, func(http.ResponseWriter, *http.Request) {})
	w.register(t, "prt_1", models.EnvSandbox, url)
	ev, err := w.s.SendTest(ctx, w.ob, "prt_1", models.EnvSandbox)
	if err != nil || ev.Type != TypeTest || ev.Environment != models.EnvSandbox {
		t.Fatalf("SendTest = %+v, %v", ev, err)
	}
	ds := w.deliveries(t, ev)
	if len(ds) != 1 {
		t.Fatalf("%d deliveries of the test event, want 1", len(ds))
	}
	if err := w.s.Deliver(ctx, w.ob, ds[0].ID, false); err != nil {
		t.Errorf("delivering the test event = %v", err)
	}
}

// Deliveries of one subject go one at a time, oldest event first: only the
// oldest pending one has a task, a retry keeps the next one waiting, and
// settling it (failed for good or delivered) gives the next its task.
// Another subject's deliveries do not wait.
func TestDeliveriesOfASubjectGoInOrder(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var status atomic.Int32
	url := receiver(t, func(rw http.ResponseWriter, r *http.Request) { rw.WriteHeader(int(status.Load())) })
	ctx := context.Background()
	w.register(t, "prt_1", models.EnvLive, url)
	a1 := w.delivery(t, w.emitAbout(t, "prt_1", models.EnvLive, "ord_a", "order.recorded"))
	a2 := w.delivery(t, w.emitAbout(t, "prt_1", models.EnvLive, "ord_a", "order.refunded"))
	b1 := w.delivery(t, w.emitAbout(t, "prt_1", models.EnvLive, "ord_b", "order.recorded"))
	a3 := w.delivery(t, w.emitAbout(t, "prt_1", models.EnvLive, "ord_a", "order.refunded"))
	loose := w.delivery(t, w.emit(t, "prt_1", models.EnvLive, TypeTest))
	w.wantTasks(t, "after the events", a1, b1, loose)

	status.Store(http.StatusServiceUnavailable)
	if err := w.s.Deliver(ctx, w.ob, a1, false); !errors.Is(err, ErrRetry) {
		t.Fatalf("first attempt at a1 = %v, want a retry", err)
	}
	w.wantTasks(t, "after a1 is retried", a1, b1, loose)
	if err := w.s.Deliver(ctx, w.ob, a1, true); err != nil {
		t.Fatalf("last attempt at a1 = %v", err)
	}
	w.wantTasks(t, "after a1 failed for good", a1, b1, loose, a2)
	status.Store(http.StatusOK)
	if err := w.s.Deliver(ctx, w.ob, a2, false); err != nil {
		t.Fatalf("delivering a2 = %v", err)
	}
	w.wantTasks(t, "after a2 is delivered", a1, b1, loose, a2, a3)
	if err := w.s.Deliver(ctx, w.ob, a2, false); err != nil {
		t.Fatalf("delivering a2 again = %v", err)
	}
	w.wantTasks(t, "after a2 is run twice", a1, b1, loose, a2, a3)
	if err := w.s.Deliver(ctx, w.ob, a3, false); err != nil {
		t.Fatalf("delivering a3 = %v", err)
	}
	w.wantTasks(t, "after the last of ord_a", a1, b1, loose, a2, a3)
}

// wantTasks fails unless the outbox holds one task for each of the
// deliveries named, and no other: a webhook:deliver task of its own, or
// a place in a fan-out.
func (w *world) wantTasks(t *testing.T, when string, ids ...string) {
	t.Helper()
	var got []string
	for _, e := range w.entries(t, tasks.TypeWebhookDeliver) {
		var p tasks.WebhookDeliverPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		got = append(got, p.DeliveryID)
	}
	for _, p := range w.fanOuts(t) {
		got = append(got, p.DeliveryIDs...)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(ids))
	if !slices.Equal(got, want) {
		t.Errorf("%s: tasks for %v, want %v", when, got, want)
	}
}

// registerOK registers prt_1's live endpoint at a receiver that takes
// every delivery.
func (w *world) registerOK(t *testing.T) {
	t.Helper()
	url := receiver(t, func(rw http.ResponseWriter, r *http.Request) { rw.WriteHeader(http.StatusOK) })
	w.register(t, "prt_1", models.EnvLive, url)
}

// emitAll is EmitAll of es in a transaction of its own.
func (w *world) emitAll(es []Emission) ([]models.Event, error) {
	var evs []models.Event
	err := w.ob.Transaction(context.Background(), func(tx *outbox.Tx) error {
		var err error
		evs, err = EmitAll(tx, es, time.Now())
		return err
	})
	return evs, err
}

// entries are the outbox's entries of typ.
func (w *world) entries(t *testing.T, typ string) []models.OutboxEntry {
	t.Helper()
	var entries []models.OutboxEntry
	if err := w.s.db.Where("task_type = ?", typ).Order("id").Find(&entries).Error; err != nil {
		t.Fatal(err)
	}
	return entries
}

// fanOuts are the payloads of the outbox's fan-out entries.
func (w *world) fanOuts(t *testing.T) []tasks.WebhookFanOutPayload {
	t.Helper()
	var ps []tasks.WebhookFanOutPayload
	for _, e := range w.entries(t, tasks.TypeWebhookFanOut) {
		var p tasks.WebhookFanOutPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// An event of the subject that comes while its delivery is on the wire
// waits, and is released when that delivery settles.
func TestAnEventDuringADeliveryWaitsForIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var during atomic.Value // the delivery made while the first is on the wire
	url := receiver(t, func(rw http.ResponseWriter, r *http.Request) {
		if during.Load() == nil {
			during.Store(w.deliveries(t, w.emitAbout(t, "prt_1", models.EnvLive, "ord_a", "order.refunded"))[0].ID)
		}
	})
	ctx := context.Background()
	w.register(t, "prt_1", models.EnvLive, url)
	first := w.deliveries(t, w.emitAbout(t, "prt_1", models.EnvLive, "ord_a", "order.recorded"))[0].ID
	if err := w.s.Deliver(ctx, w.ob, first, false); err != nil {
		t.Fatalf("delivering the first = %v", err)
	}
	second, _ := during.Load().(string)
	if second == "" {
		t.Fatal("the receiver made no event")
	}
	w.wantTasks(t, "after the first is delivered", first, second)
}

// EmitAll keeps each subject's order across one call and the calls
// before it: a subject with a pending delivery, or twice in the call,
// waits; partners without an endpoint get events and no deliveries.
func TestEmitAllKeepsTheOrderOfEachSubject(t *testing.T) {
	t.Parallel()
	w, ctx := newWorld(t), context.Background()
	w.registerOK(t)
	a1 := w.delivery(t, w.emitAbout(t, "prt_1", models.EnvLive, "ord_a", "order.recorded"))
	evs, err := w.emitAll([]Emission{
		{PartnerID: "prt_1", Environment: models.EnvLive, Subject: "ord_a", Type: "order.settled"},    // behind a1
		{PartnerID: "prt_1", Environment: models.EnvLive, Subject: "ord_b", Type: "order.settled"},    // free
		{PartnerID: "prt_1", Environment: models.EnvLive, Subject: "ord_b", Type: "order.refunded"},   // behind the one before
		{PartnerID: "prt_2", Environment: models.EnvLive, Subject: "ord_c", Type: "order.settled"},    // no endpoint
		{PartnerID: "prt_1", Environment: models.EnvSandbox, Subject: "ord_d", Type: "order.settled"}, // no endpoint there
	})
	if err != nil || len(evs) != 5 {
		t.Fatalf("EmitAll = %d events, %v", len(evs), err)
	}
	for i, ev := range evs {
		if ev.Seq == 0 || (i > 0 && ev.Seq <= evs[i-1].Seq) {
			t.Errorf("event %d has seq %d after %d: want increasing", i, ev.Seq, evs[max(i-1, 0)].Seq)
		}
	}
	if n := len(w.deliveries(t, evs[3])) + len(w.deliveries(t, evs[4])); n != 0 {
		t.Errorf("%d deliveries without an endpoint", n)
	}
	a2, b1, b2 := w.delivery(t, evs[0]), w.delivery(t, evs[1]), w.delivery(t, evs[2])
	w.wantTasks(t, "after EmitAll", a1, b1)
	for _, d := range []struct{ id, next string }{{a1, a2}, {b1, b2}} {
		if err := w.s.Deliver(ctx, w.ob, d.id, false); err != nil {
			t.Fatalf("delivering %s = %v", d.id, err)
		}
	}
	w.wantTasks(t, "after the first of each is delivered", a1, b1, a2, b2)
}

// The deliveries of one EmitAll that take a task now share one fan-out
// entry; a delivery that waits is not in it, and one alone takes its own
// task. FanOut gives each pending delivery of the fan-out a task under
// its own id, skips those settled, and run again makes none twice.
func TestABatchsDeliveriesShareOneFanOut(t *testing.T) {
	t.Parallel()
	w, ctx := newWorld(t), context.Background()
	w.registerOK(t)
	a1 := w.delivery(t, w.emitAbout(t, "prt_1", models.EnvLive, "ord_a", "order.recorded"))
	evs, err := w.emitAll([]Emission{
		{PartnerID: "prt_1", Environment: models.EnvLive, Subject: "ord_a", Type: "order.settled"}, // behind a1
		{PartnerID: "prt_1", Environment: models.EnvLive, Subject: "ord_b", Type: "order.settled"},
		{PartnerID: "prt_1", Environment: models.EnvLive, Subject: "ord_c", Type: "order.settled"},
		{PartnerID: "prt_1", Environment: models.EnvLive, Subject: "ord_d", Type: "order.settled"},
		{PartnerID: "prt_1", Environment: models.EnvLive, Subject: "ord_d", Type: "order.refunded"}, // behind the one before
	})
	if err != nil {
		t.Fatal(err)
	}
	b, c, d := w.delivery(t, evs[1]), w.delivery(t, evs[2]), w.delivery(t, evs[3])
	fanOuts := w.fanOuts(t)
	if want := [][]string{{b, c, d}}; len(fanOuts) != 1 || !slices.Equal(fanOuts[0].DeliveryIDs, want[0]) {
		t.Fatalf("fan-outs %+v, want one of %v", fanOuts, want)
	}
	w.wantTasks(t, "after EmitAll", a1, b, c, d)

	if err := w.s.Deliver(ctx, w.ob, c, false); err != nil { // c's task ran before the fan-out's retry
		t.Fatal(err)
	}
	inspector := asynq.NewInspectorFromRedisClient(w.redis.Client)
	queued := func() map[string]string { // the delivery each task carries, by task id
		infos, err := inspector.ListPendingTasks(tasks.QueueWebhooks, asynq.PageSize(100))
		if err != nil {
			t.Fatal(err)
		}
		carries := map[string]string{}
		for _, info := range infos {
			p, err := tasks.Decode[tasks.WebhookDeliverPayload](asynq.NewTask(info.Type, info.Payload))
			if info.Type != tasks.TypeWebhookDeliver || err != nil {
				continue
			}
			carries[info.ID] = p.DeliveryID
		}
		return carries
	}
	want := queued() // a1's, under its outbox entry's id
	want[b], want[d] = b, d
	for run := range 2 {
		if err := w.s.FanOut(ctx, w.ob, fanOuts[0].DeliveryIDs); err != nil {
			t.Fatalf("fan-out, run %d: %v", run+1, err)
		}
		if diff := cmp.Diff(want, queued()); diff != "" {
			t.Errorf("after fan-out run %d, the delivery tasks (task id: delivery; c delivered already) differ (-want +got):\n%s", run+1, diff)
		}
	}
}

// A fan-out that cannot reach Redis fails, for asynq to retry it.
func TestAFanOutWithoutRedisFails(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	db := w.s.db
	db.Create(&models.WebhookDelivery{ID: "whd_1", EndpointID: "whe_1", State: models.DeliveryPending})
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	ob := outbox.New(db, down, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { ob.Close() })
	if err := w.s.FanOut(context.Background(), ob, []string{"whd_1"}); err == nil || !strings.Contains(err.Error(), "whd_1") {
		t.Errorf("fan-out to a Redis that is down = %v, want an error naming the delivery", err)
	}
}
