package partner_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/brokerage"
	"github.com/domaind/domaind/internal/idempotency"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/siteprobe"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/partnerclient"
)

type quoteAnswer struct {
	QuoteID    string    `json:"quote_id"`
	QuoteToken string    `json:"quote_token"`
	PriceCents int64     `json:"price_cents"`
	ExpiresAt  time.Time `json:"expires_at"`
}

type orderAnswer struct {
	PublicID       string  `json:"public_id"`
	Domain         string  `json:"domain"`
	Status         string  `json:"status"`
	SalePriceCents int64   `json:"sale_price_cents"`
	PaymentModel   string  `json:"payment_model"`
	Review         string  `json:"review"`
	QuoteID        *string `json:"quote_id"`
	Buyer          struct {
		Email   string `json:"email"`
		Country string `json:"country"`
	} `json:"buyer"`
	Timeline []struct {
		Actor string  `json:"actor"`
		Event *string `json:"event"`
	} `json:"timeline"`
}

func orderBody(domain string, price int64, quoteID string) []byte {
	b, _ := json.Marshal(map[string]any{"domain": domain, "expected_price": price, "currency": "USD", "quote_id": quoteID,
		"external_payment_ref": "ch_3Pq", "buyer": map[string]string{"email": "Buyer@Example.com", "name": "Ada Buyer", "country": "nl"}})
	return b
}

// post sends a signed POST with an Idempotency-Key and decodes a 2xx answer.
func post(t *testing.T, c *partnerclient.Client, path string, body []byte, key string, out any) *http.Response {
	t.Helper()
	res, b, err := c.Do(context.Background(), "POST", path, nil, body, partnerclient.WithIdempotencyKey(key))
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && res.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("POST %s: %v in %s", path, err, b)
		}
	}
	if res.StatusCode/100 != 2 {
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		json.Unmarshal(b, &e)
		res.Header.Set("X-Test-Error-Code", e.Error.Code)
	}
	return res
}

// TestQuoteThenOrder is a partner's sale: quote, record it with the quote
// under an Idempotency-Key (a retry replays, another body conflicts), see
// the name leave search, and the order in the partner's list and detail,
// out of reach of another partner or environment.
func TestQuoteThenOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.addSandbox("cheapflightsnow.com", 120_000)
	cred := e.credential(models.EnvSandbox, "buy", "search")
	c := e.client(cred, 0)
	rival := e.client(e.credential(models.EnvSandbox, "buy"), 0)

	var q quoteAnswer
	if res := post(t, c, "/api/partner/v1/quotes", []byte(`{"domain":"cheapflightsnow.com"}`), "quote-1", &q); res.StatusCode != 201 {
		t.Fatalf("quote = %d %s", res.StatusCode, res.Header.Get("X-Test-Error-Code"))
	}
	if q.PriceCents != 120_000 || !strings.HasPrefix(q.QuoteToken, "qt1.") || !q.ExpiresAt.Equal(e.now.Add(10*time.Minute)) {
		t.Errorf("quote = %+v", q)
	}
	var avail struct{ Available bool }
	if err := c.GetJSON(ctx, "/api/partner/v1/availability", url.Values{"domain": {"cheapflightsnow.com"}}, &avail); err != nil || avail.Available {
		t.Errorf("availability while quoted = %+v, %v; want not available", avail, err)
	}
	err := rival.PostJSON(ctx, "/api/partner/v1/quotes", map[string]string{"domain": "cheapflightsnow.com"}, nil)
	if ae := wantAPIError(t, "a rival's quote", err, 409, "conflict"); !strings.Contains(ae.Message, "reserved until") {
		t.Errorf("conflict %q does not say until when", ae.Message)
	}

	// partnerclient sends a key with every POST: send one without by hand.
	got := e.send(e.request(e.sign(cred, "POST", "/api/partner/v1/orders", orderBody("cheapflightsnow.com", 120_000, q.QuoteID))))
	if code, _ := typedCode(t, got); got.status != 400 || code != "missing_idempotency_key" {
		t.Errorf("order without Idempotency-Key = %d %s, want 400 missing_idempotency_key", got.status, code)
	}

	var o orderAnswer
	if res := post(t, c, "/api/partner/v1/orders", orderBody("cheapflightsnow.com", 120_000, q.QuoteID), "order-1", &o); res.StatusCode != 201 {
		t.Fatalf("order = %d %s", res.StatusCode, res.Header.Get("X-Test-Error-Code"))
	}
	if o.Status != "EXTERNALLY_PAID" || o.SalePriceCents != 120_000 || o.PaymentModel != "partner_collected" || o.Review != "none" ||
		o.QuoteID == nil || *o.QuoteID != q.QuoteID || o.Buyer.Email != "buyer@example.com" || o.Buyer.Country != "NL" ||
		len(o.Timeline) != 1 || o.Timeline[0].Event == nil || *o.Timeline[0].Event != "order.recorded" || o.Timeline[0].Actor != "partner" {
		t.Errorf("order = %+v", o)
	}
	var again orderAnswer
	res := post(t, c, "/api/partner/v1/orders", orderBody("cheapflightsnow.com", 120_000, q.QuoteID), "order-1", &again)
	if res.StatusCode != 201 || res.Header.Get("Idempotent-Replayed") != "true" || again.PublicID != o.PublicID {
		t.Errorf("retry = %d (replayed %q) %s, want the first answer replayed", res.StatusCode, res.Header.Get("Idempotent-Replayed"), again.PublicID)
	}
	if res := post(t, c, "/api/partner/v1/orders", orderBody("cheapflightsnow.com", 120_001, q.QuoteID), "order-1", nil); res.StatusCode != 409 {
		t.Errorf("the key with another body = %d, want 409", res.StatusCode)
	}
	var events int64
	e.db.Model(&models.Event{}).Where("type = ? AND environment = ?", "order.recorded", models.EnvSandbox).Count(&events)
	if events != 1 {
		t.Errorf("%d order.recorded events, want 1", events)
	}

	var found searchAnswer
	if err := c.GetJSON(ctx, "/api/partner/v1/domains/search", url.Values{"q": {"cheap flights now"}}, &found); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(found.domains(), "cheapflightsnow.com") {
		t.Error("the sold name is still in search")
	}

	var list struct {
		Orders     []orderAnswer `json:"orders"`
		NextCursor *string       `json:"next_cursor"`
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/orders", nil, &list); err != nil || len(list.Orders) != 1 || list.Orders[0].PublicID != o.PublicID || list.NextCursor != nil {
		t.Errorf("orders = %+v, %v", list, err)
	}
	var detail orderAnswer
	if err := c.GetJSON(ctx, "/api/partner/v1/orders/"+o.PublicID, nil, &detail); err != nil || len(detail.Timeline) != 1 {
		t.Errorf("detail = %+v, %v", detail, err)
	}
	err = rival.GetJSON(ctx, "/api/partner/v1/orders/"+o.PublicID, nil, nil)
	wantAPIError(t, "another partner's order", err, 404, "not_found")
	live, err := e.partners.IssueCredential(ctx, e.partnerOf(cred), models.EnvLive, []string{"buy"})
	if err != nil {
		t.Fatal(err)
	}
	err = e.client(live, 0).GetJSON(ctx, "/api/partner/v1/orders/"+o.PublicID, nil, nil)
	wantAPIError(t, "the sandbox order with the partner's live key", err, 404, "not_found")
}

// TestOrderRefusals: each refusal has its code and records nothing.
func TestOrderRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addSandbox("sunsetyoga.io", 250_000)
	e.addLive("livename.com", 99_000)
	c := e.client(e.credential(models.EnvSandbox, "buy"), 0)
	for i, tc := range []struct {
		name   string
		body   string
		status int
		code   string
	}{
		{"not JSON", `{"domain":`, 400, "bad_request"},
		{"unknown field", `{"domain":"sunsetyoga.io","discount":5}`, 400, "validation_error"},
		{"no buyer", `{"domain":"sunsetyoga.io","expected_price":250000,"currency":"USD","external_payment_ref":"x"}`, 400, "validation_error"},
		{"live name with a sandbox key", string(orderBody("livename.com", 99_000, "")), 404, "not_found"},
		{"unknown quote", string(orderBody("sunsetyoga.io", 250_000, "qt_nosuch")), 400, "validation_error"},
		{"wrong price", string(orderBody("sunsetyoga.io", 200_000, "")), 422, "price_mismatch"},
	} {
		res := post(t, c, "/api/partner/v1/orders", []byte(tc.body), "refusal-"+string(rune('a'+i)), nil)
		if res.StatusCode != tc.status || res.Header.Get("X-Test-Error-Code") != tc.code {
			t.Errorf("%s = %d %s, want %d %s", tc.name, res.StatusCode, res.Header.Get("X-Test-Error-Code"), tc.status, tc.code)
		}
	}
	var n int64
	e.db.Model(&models.Order{}).Count(&n)
	if n != 0 {
		t.Errorf("%d orders after refusals", n)
	}
}

// TestRefundsOverTheAPI: partial then full refund, the name back on sale,
// refused after the transfer completed.
func TestRefundsOverTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addSandbox("refundme.com", 10_000)
	cred := e.credential(models.EnvSandbox, "buy")
	c := e.client(cred, 0)
	var o orderAnswer
	post(t, c, "/api/partner/v1/orders", orderBody("refundme.com", 10_000, ""), "o1", &o)
	var r struct {
		ID          string `json:"id"`
		AmountCents int64  `json:"amount_cents"`
		OrderStatus string `json:"order_status"`
	}
	if res := post(t, c, "/api/partner/v1/refunds", []byte(`{"order_id":"`+o.PublicID+`","reason":"wrong name","amount_cents":2500}`), "r1", &r); res.StatusCode != 201 ||
		r.AmountCents != 2500 || r.OrderStatus != "EXTERNALLY_PAID" {
		t.Fatalf("partial refund = %d %+v", res.StatusCode, r)
	}
	// Without an Idempotency-Key (optional on refunds, SPEC §5.5).
	got := e.send(e.request(e.sign(cred, "POST", "/api/partner/v1/refunds", []byte(`{"order_id":"`+o.PublicID+`","reason":"the rest"}`))))
	if err := json.Unmarshal(got.body, &r); err != nil || got.status != 201 || r.AmountCents != 7500 || r.OrderStatus != "REFUNDED" {
		t.Fatalf("full refund without a key = %d %s", got.status, got.body)
	}
	if res := post(t, c, "/api/partner/v1/refunds", []byte(`{"order_id":"`+o.PublicID+`","reason":"again"}`), "r3", nil); res.StatusCode != 409 {
		t.Errorf("refund of a refunded order = %d, want 409", res.StatusCode)
	}
	if res := post(t, c, "/api/partner/v1/refunds", []byte(`{"order_id":"ord_nosuch","reason":"x"}`), "r4", nil); res.StatusCode != 404 {
		t.Errorf("refund of an unknown order = %d, want 404", res.StatusCode)
	}
	var again orderAnswer
	if res := post(t, c, "/api/partner/v1/orders", orderBody("refundme.com", 10_000, ""), "o2", &again); res.StatusCode != 201 {
		t.Errorf("buying the refunded name again = %d", res.StatusCode)
	}
}

// A partner's Idempotency-Keys are kept in the database: a refund retried
// after Redis lost its data replays its first answer, and no second
// refund is made.
func TestARefundRetriedAfterRedisLostItsDataRunsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addSandbox("refundonce.com", 10_000)
	c := e.client(e.credential(models.EnvSandbox, "buy"), 0)
	var o orderAnswer
	post(t, c, "/api/partner/v1/orders", orderBody("refundonce.com", 10_000, ""), "o1", &o)
	refund := []byte(`{"order_id":"` + o.PublicID + `","reason":"wrong name","amount_cents":2500}`)
	var first, again struct {
		ID string `json:"id"`
	}
	if res := post(t, c, "/api/partner/v1/refunds", refund, "r1", &first); res.StatusCode != 201 {
		t.Fatalf("refund = %d", res.StatusCode)
	}
	e.redis.Flush(t)
	res := post(t, c, "/api/partner/v1/refunds", refund, "r1", &again)
	if res.StatusCode != 201 || res.Header.Get("Idempotent-Replayed") != "true" || again.ID != first.ID {
		t.Errorf("the retry after Redis lost its data = %d (replayed %q), refund %s; want %s replayed",
			res.StatusCode, res.Header.Get("Idempotent-Replayed"), again.ID, first.ID)
	}
	var refunds []models.Refund
	e.db.Where("order_id = ?", o.PublicID).Find(&refunds)
	if len(refunds) != 1 {
		t.Errorf("%d refunds of the order, want one", len(refunds))
	}
}

// A sale, refund or brokerage case whose process died between committing
// its change and storing its answer is not made again by a retry with its
// Idempotency-Key once the key's hold of a few minutes is over: the
// change's transaction marked the key, and the retry is told the change
// was made.
func TestAChangeWhoseAnswerWasLostIsNotMadeAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addSandbox("answerlost.com", 10_000)
	e.addSandbox("orderlost.com", 10_000)
	e.registered("caselost.com")
	parked := siteprobe.Result{Domain: "caselost.com", Verdict: siteprobe.Verdict{Reason: siteprobe.ReasonParked}}
	if err := brokerage.RecordProbe(context.Background(), e.db, parked, e.now); err != nil {
		t.Fatal(err)
	}
	cred := e.credential(models.EnvSandbox, "buy", "broker")
	c := e.client(cred, 0)
	partnerID := e.partnerOf(cred)
	var o orderAnswer
	post(t, c, "/api/partner/v1/orders", orderBody("answerlost.com", 10_000, ""), "o1", &o)
	var marked int64
	e.db.Model(&models.IdempotencyRecord{}).Where("carried_out").Count(&marked)
	if marked != 1 {
		t.Errorf("%d keys marked carried out after an order made through the API, want its one", marked)
	}
	refund := []byte(`{"order_id":"` + o.PublicID + `","reason":"wrong name","amount_cents":2500}`)
	cases := []struct {
		path, key string
		body      []byte
		change    func(ctx context.Context, body []byte) error
		table     string
		where     []any
	}{
		{"/api/partner/v1/refunds", "r1", refund, func(ctx context.Context, body []byte) error {
			var r order.NewRefund
			json.Unmarshal(body, &r)
			_, err := e.svc.Orders.Refund(ctx, partnerID, models.EnvSandbox, r)
			return err
		}, "refunds", []any{"order_id = ?", o.PublicID}},
		{"/api/partner/v1/orders", "o2", orderBody("orderlost.com", 10_000, ""), func(ctx context.Context, body []byte) error {
			var n order.NewOrder
			json.Unmarshal(body, &n)
			_, err := e.svc.Orders.Record(ctx, partnerID, models.EnvSandbox, n)
			return err
		}, "orders", []any{"domain = ?", "orderlost.com"}},
		{"/api/partner/v1/brokerage", "b1", []byte(`{"domain":"caselost.com","tier":"managed","buyer_email":"ada@buyer.example","budget":1500000}`),
			func(ctx context.Context, body []byte) error {
				var in brokerage.NewCase
				json.Unmarshal(body, &in)
				_, err := e.svc.Brokerage.Open(ctx, partnerID, models.EnvSandbox, in)
				return err
			}, "brokerage_cases", []any{"domain = ?", "caselost.com"}},
	}
	ctx := context.Background()
	for _, tc := range cases {
		// What the request did before its process died: it claimed its
		// key and made its change; storing the answer never happened.
		scope, fp := idempotency.PartnerScope(cred.KeyID), idempotency.Fingerprint("POST", tc.path, tc.body)
		if _, claimed, err := e.svc.Idempotency.Begin(ctx, scope, tc.key, fp); err != nil || !claimed {
			t.Fatalf("%s: claim = %v, %v", tc.path, claimed, err)
		}
		if err := tc.change(e.svc.Idempotency.Claimed(ctx, scope, tc.key, fp), tc.body); err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
	}
	e.now = e.now.Add(6 * time.Minute)
	e.redis.Flush(t) // the claims' copies in Redis have expired too
	for _, tc := range cases {
		res, b, err := c.Do(ctx, "POST", tc.path, nil, tc.body, partnerclient.WithIdempotencyKey(tc.key))
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 409 || !strings.Contains(string(b), "made its change") {
			t.Errorf("%s: the retry = %d %s, want 409 saying the change was made", tc.path, res.StatusCode, b)
		}
		var n int64
		e.db.Table(tc.table).Where(tc.where[0], tc.where[1:]...).Count(&n)
		if n != 1 {
			t.Errorf("%s: %d %s, want one", tc.path, n, tc.table)
		}
	}
}

// A refund held up past its key's hold, whose retry took the key over,
// cannot mark the key: it is refused and leaves the key to the retry,
// whose refund is the one made and whose answer a third try replays. The
// first request is held in its transaction by a lock on the order, on
// Postgres (SQLite has no row locks; the store's half of this is
// TestARequestWhoseKeyWasTakenOverCannotMarkIt).
func TestARequestThatLostItsKeyLeavesItToTheRetry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if !models.IsPostgres(e.db) {
		t.Skip("holds a request in its transaction with a Postgres row lock; the real-server stage of .ci/run runs it")
	}
	e.addSandbox("slowrefund.com", 10_000)
	c := e.client(e.credential(models.EnvSandbox, "buy"), 0)
	var o orderAnswer
	post(t, c, "/api/partner/v1/orders", orderBody("slowrefund.com", 10_000, ""), "o1", &o)
	refund := []byte(`{"order_id":"` + o.PublicID + `","reason":"wrong name","amount_cents":2500}`)

	ctx := context.Background()
	lock := e.db.Begin()
	defer lock.Rollback()
	var holder int64
	if err := lock.Raw("SELECT pg_backend_pid() FROM orders WHERE public_id = ? FOR UPDATE", o.PublicID).Scan(&holder).Error; err != nil {
		t.Fatal(err)
	}
	type answer struct {
		status int
		body   string
		err    error
	}
	send := func() <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			res, b, err := c.Do(ctx, "POST", "/api/partner/v1/refunds", nil, refund, partnerclient.WithIdempotencyKey("r1"))
			if err != nil {
				ch <- answer{err: err}
				return
			}
			ch <- answer{status: res.StatusCode, body: string(b)}
		}()
		return ch
	}
	// waiter returns the backend that waits behind pid, once there is one.
	waiter := func(pid int64) int64 {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var pids []int64
			if err := e.db.Raw("SELECT pid FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))", pid).Scan(&pids).Error; err != nil {
				t.Fatal(err)
			}
			if len(pids) > 0 {
				return pids[0]
			}
			if time.Now().After(deadline) {
				t.Fatalf("no request waits behind backend %d", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	first := send()
	firstPID := waiter(holder)
	e.now = e.now.Add(6 * time.Minute) // past the first request's hold
	e.redis.Flush(t)                   // whose copy in Redis has expired too
	retry := send()
	waiter(firstPID)
	if err := lock.Commit().Error; err != nil {
		t.Fatal(err)
	}

	a, b := <-first, <-retry
	if a.err != nil || b.err != nil {
		t.Fatalf("refunds: %v, %v", a.err, b.err)
	}
	if a.status != 409 {
		t.Errorf("the request that lost its key = %d %s, want 409", a.status, a.body)
	}
	if b.status != 201 {
		t.Errorf("the retry that took the key over = %d %s, want 201", b.status, b.body)
	}
	res, again, err := c.Do(ctx, "POST", "/api/partner/v1/refunds", nil, refund, partnerclient.WithIdempotencyKey("r1"))
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 201 || res.Header.Get("Idempotent-Replayed") != "true" || string(again) != b.body {
		t.Errorf("a third try = %d (replayed %q) %s; want the retry's answer replayed: %s",
			res.StatusCode, res.Header.Get("Idempotent-Replayed"), again, b.body)
	}
	var refunds int64
	e.db.Model(&models.Refund{}).Where("order_id = ?", o.PublicID).Count(&refunds)
	if refunds != 1 {
		t.Errorf("%d refunds of the order, want one", refunds)
	}
}

// TestOrderListFilters walks and filters the list.
func TestOrderListFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	c := e.client(e.credential(models.EnvSandbox, "buy"), 0)
	var ids []string
	for i, d := range []string{"alpha.com", "bravo.com", "charlie.com"} {
		e.addSandbox(d, 1_000)
		var o orderAnswer
		post(t, c, "/api/partner/v1/orders", orderBody(d, 1_000, ""), "list-"+d, &o)
		ids = append(ids, o.PublicID)
		if i == 0 {
			e.now = e.now.Add(48 * time.Hour)
		}
	}
	type page struct {
		Orders     []orderAnswer `json:"orders"`
		NextCursor *string       `json:"next_cursor"`
	}
	var p page
	if err := c.GetJSON(ctx, "/api/partner/v1/orders", url.Values{"limit": {"2"}}, &p); err != nil || len(p.Orders) != 2 || p.NextCursor == nil {
		t.Fatalf("first page = %+v, %v", p, err)
	}
	var p2 page
	if err := c.GetJSON(ctx, "/api/partner/v1/orders", url.Values{"limit": {"2"}, "cursor": {*p.NextCursor}}, &p2); err != nil || len(p2.Orders) != 1 || p2.Orders[0].PublicID != ids[0] {
		t.Errorf("second page = %+v, %v", p2, err)
	}
	day := e.now.Add(-48 * time.Hour).Format(time.DateOnly)
	if err := c.GetJSON(ctx, "/api/partner/v1/orders", url.Values{"to": {day}}, &p); err != nil || len(p.Orders) != 1 || p.Orders[0].Domain != "alpha.com" {
		t.Errorf("orders to %s = %+v, %v; want alpha.com", day, p, err)
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/orders", url.Values{"domain": {"Bravo.com"}, "status": {"EXTERNALLY_PAID"}}, &p); err != nil || len(p.Orders) != 1 {
		t.Errorf("orders of bravo.com = %+v, %v", p, err)
	}
	for _, bad := range []url.Values{{"from": {"yesterday"}}, {"limit": {"0"}}, {"status": {"LOST"}}, {"domain": {"not a domain"}}} {
		err := c.GetJSON(ctx, "/api/partner/v1/orders", bad, nil)
		wantAPIError(t, "orders "+bad.Encode(), err, 400, "validation_error")
	}
	err := c.GetJSON(ctx, "/api/partner/v1/orders", url.Values{"cursor": {"forged"}}, nil)
	wantAPIError(t, "a forged cursor", err, 400, "invalid_cursor")
}
