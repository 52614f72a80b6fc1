package partner_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/partnerclient"
)

// receiver is a partner's webhook endpoint on receiverAddr, keeping what
// it is sent.
type receiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []received
}

type received struct {
	body                          []byte
	signature, eventID, timestamp string
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.Server = serveOnReceiverAddr(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{b, r.Header.Get("X-Service-Signature"), r.Header.Get(webhook.HeaderEventID), r.Header.Get(webhook.HeaderTimestamp)})
		rc.mu.Unlock()
	}))
	return rc
}

// newReceiverFunc serves a receiver that hands each body to got, and
// returns its URL.
func newReceiverFunc(tb testing.TB, got func(body []byte)) string {
	tb.Helper()
	return serveOnReceiverAddr(tb, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got(b)
	})).URL
}

// serveOnReceiverAddr serves h on receiverAddr until the test ends.
func serveOnReceiverAddr(tb testing.TB, h http.Handler) *httptest.Server {
	tb.Helper()
	ln, err := net.Listen("tcp", receiverAddr+":0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	tb.Cleanup(srv.Close)
	return srv
}

func (rc *receiver) received() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// deliverAll makes every pending delivery's attempt, as the worker's
// webhook:deliver tasks would.
func (e *env) deliverAll() {
	e.t.Helper()
	svc := webhook.New(e.db, testSecretKey, []netip.Prefix{netip.MustParsePrefix(receiverAddr + "/32")}, e.clock)
	var ids []string
	e.db.Model(&models.WebhookDelivery{}).Where("state = ?", "pending").Order("event_seq").Pluck("id", &ids)
	for _, id := range ids {
		if err := svc.Deliver(context.Background(), e.outbox, id, false); err != nil {
			e.t.Fatalf("deliver %s: %v", id, err)
		}
	}
}

type endpointAnswer struct {
	URL       string    `json:"url"`
	Active    bool      `json:"active"`
	CreatedAt time.Time `json:"created_at"`
}

func putWebhook(c *partnerclient.Client, rawURL, secret string, out any) error {
	b, _ := json.Marshal(map[string]string{"url": rawURL, "secret": secret})
	return c.PutJSON(context.Background(), "/api/partner/webhooks", json.RawMessage(b), out)
}

// TestWebhookTestEventIsDeliveredSignedAndInTheHistory is the partner's
// first hour: register a receiver, send the test event, receive it signed,
// find it in the history, and have it sent again.
func TestWebhookTestEventIsDeliveredSignedAndInTheHistory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	cred := e.credential(models.EnvSandbox, "webhook")
	c := e.client(cred, 0)
	rc := newReceiver(t)
	const hookSecret = "whsec_partner_receiver_01"

	err := c.PostJSON(ctx, "/api/partner/v1/webhooks/test", nil, nil)
	wantAPIError(t, "test event before registering", err, 409, "conflict")

	var ep endpointAnswer
	if err := putWebhook(c, rc.URL+"/hooks", hookSecret, &ep); err != nil {
		t.Fatal(err)
	}
	if ep.URL != rc.URL+"/hooks" || !ep.Active || ep.CreatedAt.IsZero() {
		t.Errorf("registered endpoint = %+v", ep)
	}
	var ev struct {
		ID, Type string
	}
	if err := c.PostJSON(ctx, "/api/partner/v1/webhooks/test", nil, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "webhook.test" || ev.ID == "" {
		t.Fatalf("test event = %+v", ev)
	}
	e.deliverAll()
	got := rc.received()
	if len(got) != 1 {
		t.Fatalf("receiver got %d deliveries, want 1", len(got))
	}
	if !partnerclient.Verify(got[0].body, got[0].signature, hookSecret) || got[0].eventID != ev.ID {
		t.Errorf("delivery: signature %q valid=%v, event id %q; want a valid signature of event %s",
			got[0].signature, partnerclient.Verify(got[0].body, got[0].signature, hookSecret), got[0].eventID, ev.ID)
	}
	var env struct {
		ID, Type string
	}
	if err := json.Unmarshal(got[0].body, &env); err != nil || env.ID != ev.ID || env.Type != "webhook.test" {
		t.Errorf("delivered body %s, want the envelope of %s", got[0].body, ev.ID)
	}
	if ts, err := strconv.ParseInt(got[0].timestamp, 10, 64); err != nil || ts != e.now.Unix() {
		t.Errorf("X-Service-Timestamp %q, want %d", got[0].timestamp, e.now.Unix())
	}

	var hist eventsAnswer
	if err := c.GetJSON(ctx, "/api/partner/v1/events", nil, &hist); err != nil {
		t.Fatal(err)
	}
	if len(hist.Events) != 1 || hist.Events[0].ID != ev.ID || hist.HasMore {
		t.Errorf("history = %+v, want the test event alone", hist)
	}

	var redo struct {
		EventID    string `json:"event_id"`
		DeliveryID string `json:"delivery_id"`
	}
	if err := c.PostJSON(ctx, "/api/partner/v1/events/"+ev.ID+"/redeliver", nil, &redo); err != nil {
		t.Fatal(err)
	}
	e.deliverAll()
	if got := rc.received(); len(got) != 2 || got[1].eventID != ev.ID || redo.EventID != ev.ID || redo.DeliveryID == "" {
		t.Errorf("after redelivery the receiver got %d deliveries (%+v), answer %+v; want the same event again", len(got), got, redo)
	}
	err = c.PostJSON(ctx, "/api/partner/v1/events/evt_nosuchevent/redeliver", nil, nil)
	wantAPIError(t, "redeliver an unknown event", err, 404, "not_found")
}

// TestWebhookRegistrationRefusesBadInput: each refused registration is a
// validation error naming its field and leaves nothing behind.
func TestWebhookRegistrationRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client(e.credential(models.EnvSandbox, "webhook"), 0)
	for _, tc := range []struct{ name, url, secret, field string }{
		{"no url", "", "whsec_0123456789abcdef", "url"},
		{"not a url", "hooks partner example", "whsec_0123456789abcdef", "url"},
		{"ftp", "ftp://hooks.partner.example/in", "whsec_0123456789abcdef", "url"},
		{"private address", "https://10.0.0.7/in", "whsec_0123456789abcdef", "url"},
		{"loopback outside the allowed range", "http://127.0.0.1:9/in", "whsec_0123456789abcdef", "url"},
		{"credentials in the url", "https://user:pw@127.0.0.2/in", "whsec_0123456789abcdef", "url"},
		{"no secret", "https://hooks.partner.example/in", "", "secret"},
		{"short secret", "https://hooks.partner.example/in", "short", "secret"},
	} {
		err := putWebhook(c, tc.url, tc.secret, nil)
		if ae := wantAPIError(t, tc.name, err, 400, "validation_error"); ae.Field != tc.field {
			t.Errorf("%s: field %q, want %q", tc.name, ae.Field, tc.field)
		}
	}
	live := e.client(e.credential(models.EnvLive, "webhook"), 0)
	if ae := wantAPIError(t, "http for a live credential", putWebhook(live, "http://93.184.216.34/in", "whsec_0123456789abcdef", nil), 400,
		"validation_error"); ae.Field != "url" || !strings.Contains(ae.Message, "https") {
		t.Errorf("http for a live credential: %+v, want url to say https", ae)
	}
	res, body, err := c.Do(context.Background(), "PUT", "/api/partner/webhooks", nil, []byte(`{"url":"https://hooks.partner.example/in","secret":"whsec_0123456789abcdef","extra":1}`))
	if err != nil || res.StatusCode != 400 {
		t.Errorf("unknown field: %v %s, %v; want 400", res.StatusCode, body, err)
	}
	var n int64
	e.db.Model(&models.WebhookEndpoint{}).Count(&n)
	if n != 0 {
		t.Errorf("%d endpoints after refused registrations, want none", n)
	}
}

type eventsAnswer struct {
	Events []struct {
		ID   string          `json:"id"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	} `json:"events"`
	NextCursor *string `json:"next_cursor"`
	HasMore    bool    `json:"has_more"`
}

// TestEventHistoryWalk pages through a partner's events with after_id,
// oldest first, and sees neither another environment's nor another
// partner's.
func TestEventHistoryWalk(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	cred := e.credential(models.EnvSandbox, "webhook")
	partnerID := e.partnerOf(cred)
	stranger := e.partnerOf(e.credential(models.EnvSandbox, "webhook"))
	var want []string
	err := e.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		for i := range 7 {
			ev, err := webhook.Emit(tx, partnerID, models.EnvSandbox, "", "order.recorded", map[string]int{"n": i}, e.now)
			if err != nil {
				return err
			}
			want = append(want, ev.ID)
			if _, err := webhook.Emit(tx, partnerID, models.EnvLive, "", "order.recorded", map[string]int{"n": i}, e.now); err != nil {
				return err
			}
			if _, err := webhook.Emit(tx, stranger, models.EnvSandbox, "", "order.recorded", map[string]int{"n": i}, e.now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c := e.client(cred, 0)
	var seen []string
	after := ""
	for pages := 0; ; pages++ {
		q := url.Values{"limit": {"3"}}
		if after != "" {
			q.Set("after_id", after)
		}
		var page eventsAnswer
		if err := c.GetJSON(ctx, "/api/partner/v1/events", q, &page); err != nil {
			t.Fatal(err)
		}
		for _, ev := range page.Events {
			seen = append(seen, ev.ID)
		}
		if page.NextCursor == nil {
			t.Fatalf("page %d has no next_cursor", pages)
		}
		after = *page.NextCursor
		if !page.HasMore {
			if len(page.Events) == 0 && pages == 0 {
				t.Fatal("no events")
			}
			break
		}
		if pages > 5 {
			t.Fatal("the walk does not end")
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("walked %d events, want %d: %v", len(seen), len(want), seen)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("event %d = %s, want %s (oldest first)", i, seen[i], want[i])
		}
	}
	var last eventsAnswer
	if err := c.GetJSON(ctx, "/api/partner/v1/events", url.Values{"after_id": {after}}, &last); err != nil {
		t.Fatal(err)
	}
	if len(last.Events) != 0 || last.NextCursor == nil || *last.NextCursor != after {
		t.Errorf("polling after the last event = %+v, want no events and the same cursor", last)
	}

	for _, bad := range []url.Values{{"limit": {"0"}}, {"limit": {"101"}}, {"limit": {"ten"}}, {"after_id": {"evt_not_mine"}}} {
		err := c.GetJSON(ctx, "/api/partner/v1/events", bad, nil)
		wantAPIError(t, "events "+bad.Encode(), err, 400, "validation_error")
	}
}

// TestARetriedTestEventIsSentOnce: a POST retried with its Idempotency-Key
// (signed again, with a fresh nonce) gets the first answer; the key is the
// credential's own.
func TestARetriedTestEventIsSentOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	cred := e.credential(models.EnvSandbox, "webhook")
	c := e.client(cred, 0)
	rc := newReceiver(t)
	if err := putWebhook(c, rc.URL+"/hooks", "whsec_partner_receiver_01", nil); err != nil {
		t.Fatal(err)
	}
	send := func(c *partnerclient.Client) (string, string) {
		res, body, err := c.Do(ctx, "POST", "/api/partner/v1/webhooks/test", nil, nil, partnerclient.WithIdempotencyKey("test-1"))
		if err != nil || res.StatusCode != 202 {
			t.Fatalf("send the test event: %v %s, %v", res.StatusCode, body, err)
		}
		var ev struct{ ID string }
		json.Unmarshal(body, &ev)
		return ev.ID, res.Header.Get("Idempotent-Replayed")
	}
	first, _ := send(c)
	again, replayed := send(c)
	if again != first || replayed != "true" {
		t.Errorf("retry answered event %s (Idempotent-Replayed %q), want %s replayed", again, replayed, first)
	}
	var n int64
	e.db.Model(&models.Event{}).Count(&n)
	if n != 1 {
		t.Errorf("%d events after a retried request, want 1", n)
	}

	// Another credential of another partner, same key: its own request.
	other := e.credential(models.EnvSandbox, "webhook")
	oc := e.client(other, 0)
	if err := putWebhook(oc, rc.URL+"/hooks", "whsec_partner_receiver_02", nil); err != nil {
		t.Fatal(err)
	}
	if id, replayed := send(oc); id == first || replayed != "" {
		t.Errorf("another credential with the same key got event %s (replayed %q)", id, replayed)
	}
}

// An order's events reach the receiver in the order they happened, one at
// a time, even when the first is slow to be acknowledged: the receiver
// holds the first delivery until the test has made every later event and
// a little longer, and a delivery arriving while one of the same order is
// unanswered is a failure. Two orders are interleaved, so the order is
// kept per order, not across them.
func TestEventsOfAnOrderArriveInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	var mu sync.Mutex
	arrived := map[string][]string{} // order → event ids, in arrival order
	busy := map[string]bool{}        // order → a delivery is unanswered
	done := make(chan struct{})      // closed when every event is made
	held := false
	url := serveOnReceiverAddr(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env struct {
			ID   string `json:"id"`
			Data struct {
				Order struct {
					PublicID string `json:"public_id"`
				} `json:"order"`
			} `json:"data"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &env)
		o := env.Data.Order.PublicID
		mu.Lock()
		if busy[o] {
			t.Errorf("event %s of %s arrived while an earlier one was unanswered", env.ID, o)
		}
		busy[o] = true
		arrived[o] = append(arrived[o], env.ID)
		hold := !held
		held = true
		mu.Unlock()
		if hold { // long enough for out-of-order deliveries to arrive
			<-done
			time.Sleep(300 * time.Millisecond)
		}
		mu.Lock()
		busy[o] = false
		mu.Unlock()
	})).URL
	cred := e.credential(models.EnvSandbox, "buy", "webhook")
	c := e.client(cred, 0)
	if err := putWebhook(c, url+"/hooks", "whsec_ordered_receiver", nil); err != nil {
		t.Fatal(err)
	}
	var orders []string
	for _, d := range []string{"ordered-one.com", "ordered-two.com"} {
		e.addSandbox(d, 10_000)
		var o orderAnswer
		post(t, c, "/api/partner/v1/orders", orderBody(d, 10_000, ""), d, &o)
		orders = append(orders, o.PublicID)
	}
	for _, o := range orders {
		post(t, c, "/api/partner/v1/refunds", []byte(`{"order_id":"`+o+`","reason":"part","amount_cents":2500}`), o+"-1", nil)
	}
	for _, o := range orders {
		post(t, c, "/api/partner/v1/refunds", []byte(`{"order_id":"`+o+`","reason":"the rest"}`), o+"-2", nil)
	}
	close(done)

	happened := map[string][]string{}
	events, err := webhook.New(e.db, testSecretKey, nil, time.Now).History(context.Background(), e.partnerOf(cred), models.EnvSandbox, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		var data struct {
			Order struct {
				PublicID string `json:"public_id"`
			} `json:"order"`
		}
		json.Unmarshal(ev.Data, &data)
		happened[data.Order.PublicID] = append(happened[data.Order.PublicID], ev.ID)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(arrived[orders[0]]) + len(arrived[orders[1]])
		mu.Unlock()
		if n >= 6 {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, o := range orders {
		if len(happened[o]) != 3 || !slices.Equal(arrived[o], happened[o]) {
			t.Errorf("events of %s arrived as %v, happened as %v (3 of them)", o, arrived[o], happened[o])
		}
	}
}

// A partner with no events yet gets a cursor it can store and poll from
// (SPEC §6.3): the first event, when it comes, is after it.
func TestEventHistoryPollsFromBeforeTheFirstEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	cred := e.credential(models.EnvSandbox, "webhook")
	c := e.client(cred, 0)
	var empty eventsAnswer
	if err := c.GetJSON(ctx, "/api/partner/v1/events", nil, &empty); err != nil {
		t.Fatal(err)
	}
	if len(empty.Events) != 0 || empty.NextCursor == nil || *empty.NextCursor == "" {
		t.Fatalf("no events yet = %+v, want a cursor to poll from", empty)
	}
	var first models.Event
	partnerID := e.partnerOf(cred)
	err := e.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		var err error
		first, err = webhook.Emit(tx, partnerID, models.EnvSandbox, "", "order.recorded", map[string]int{"n": 1}, e.now)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var polled eventsAnswer
	if err := c.GetJSON(ctx, "/api/partner/v1/events", url.Values{"after_id": {*empty.NextCursor}}, &polled); err != nil {
		t.Fatal(err)
	}
	if len(polled.Events) != 1 || polled.Events[0].ID != first.ID || polled.NextCursor == nil || *polled.NextCursor != first.ID {
		t.Errorf("polling from the empty history's cursor = %+v, want the first event %s", polled, first.ID)
	}
}
