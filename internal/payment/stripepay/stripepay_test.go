package stripepay_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/internal/payment/stripepay"
	"github.com/domaind/domaind/internal/payment/stripepay/stripepaytest"
	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/models"
)

func newProvider(t *testing.T) (*stripepay.Provider, string) {
	t.Helper()
	mock := testtool.StripeMock(t)
	return stripepay.New(stripepay.Options{SecretKey: stripepaytest.Key, WebhookSecret: stripepaytest.WebhookSecret, APIURL: mock}), mock
}

// The calls the checkout makes are ones Stripe's API takes: stripe-mock
// checks each request against Stripe's OpenAPI document and refuses a
// parameter Stripe does not know or lacks one it needs.
func TestStripeTakesTheCallsTheCheckoutMakes(t *testing.T) {
	t.Parallel()
	p, _ := newProvider(t)
	ctx := context.Background()
	if p.Name() != "stripe" || !p.TestMode() {
		t.Errorf("name %q, test mode %v; want stripe in test mode for a test key", p.Name(), p.TestMode())
	}
	page, err := p.Redirect(ctx, payment.Redirect{PaymentID: "pay_1", IdempotencyKey: "pay_1", SessionID: "cs_ours", AmountCents: 250_000,
		Currency: "USD", Description: "sunsetyoga.io", Email: "ada@example.com", SuccessURL: "https://domaind.test/checkout?pt=x&paid=1",
		CancelURL: "https://domaind.test/checkout?pt=x", ExpiresAt: time.Now().Add(31 * time.Minute)})
	if err != nil || !strings.HasPrefix(page.Ref, "cs_") || !strings.HasPrefix(page.URL, "https://checkout.stripe.com/") {
		t.Fatalf("checkout session = %+v, %v; want a cs_ id and Stripe's page", page, err)
	}
	open, err := p.Check(ctx, page.Ref)
	if err != nil || open.Kind != "" || open.Ref != page.Ref {
		t.Errorf("an open session checks as %+v, %v; want no kind yet", open, err)
	}
	refund, err := p.Refund(ctx, payment.Refund{ChargeID: "pi_1", AmountCents: 5_000, Currency: "USD", IdempotencyKey: "rf_1"})
	if err != nil || !strings.HasPrefix(refund, "re_") {
		t.Errorf("refund = %q, %v; want a re_ id", refund, err)
	}
	// A refund first asked for two days ago lists the PaymentIntent's
	// refunds first (stripe-mock's have no key of ours), then makes it.
	refund, err = p.Refund(ctx, payment.Refund{ChargeID: "pi_1", AmountCents: 5_000, Currency: "USD", IdempotencyKey: "rf_2",
		Since: time.Now().Add(-48 * time.Hour)})
	if err != nil || !strings.HasPrefix(refund, "re_") {
		t.Errorf("a refund first asked for two days ago = %q, %v; want a re_ id", refund, err)
	}
	if _, found, err := p.Lookup(ctx, models.Payment{ID: "pay_2"}); found || err != nil {
		t.Errorf("a payment whose page never opened looks up as found=%v, %v; want nothing charged", found, err)
	}

	bad := stripepay.New(stripepay.Options{SecretKey: stripepaytest.Key, APIURL: "http://127.0.0.1:9"})
	if _, err := bad.Redirect(ctx, payment.Redirect{PaymentID: "pay_3", IdempotencyKey: "pay_3", AmountCents: 100, Currency: "USD",
		SuccessURL: "https://x.test/", CancelURL: "https://x.test/", ExpiresAt: time.Now().Add(time.Hour)}); err == nil {
		t.Error("a Stripe that does not answer opened a page")
	}
}

// Stripe's notices are read when, and only when, Stripe signed them:
// a wrong secret, a changed payload and a stale timestamp are refused;
// each type the checkout acts on is read into its kind.
func TestStripeNoticesAreReadOnlySigned(t *testing.T) {
	t.Parallel()
	p, mock := newProvider(t)
	now := time.Now()
	paid := stripepaytest.Event(t, "evt_paid", "checkout.session.completed",
		stripepaytest.PaidSession(t, mock, "cs_test_paid", "pay_9", "pi_9", 250_000, "usd"), now)

	for _, tc := range []struct {
		name, header string
		payload      []byte
	}{
		{"no signature", "", paid},
		{"another secret", stripepaytest.Sign(paid, "whsec_other", now), paid},
		{"a changed payload", stripepaytest.Sign(paid, stripepaytest.WebhookSecret, now), []byte(strings.Replace(string(paid), "250000", "1", 1))},
		{"a stale timestamp", stripepaytest.Sign(paid, stripepaytest.WebhookSecret, now.Add(-6*time.Minute)), paid},
		{"garbage", "t=1,v1=zz", []byte("{")},
	} {
		if ev, err := p.ParseEvent(tc.payload, tc.header); !errors.Is(err, payment.ErrBadSignature) {
			t.Errorf("%s: read as %+v, %v; want ErrBadSignature", tc.name, ev, err)
		}
	}

	ev, err := p.ParseEvent(paid, stripepaytest.Sign(paid, stripepaytest.WebhookSecret, now))
	want := payment.Event{ID: "evt_paid", Type: "checkout.session.completed", Kind: payment.EventPaid, PaymentID: "pay_9", Ref: "cs_test_paid",
		ChargeID: "pi_9", AmountCents: 250_000, Currency: "USD"}
	if err != nil || ev != want {
		t.Errorf("a paid session reads as %+v, %v; want %+v", ev, err, want)
	}

	cases := []struct {
		typ, path string
		change    map[string]any
		want      payment.Event
	}{
		{"checkout.session.completed", "/v1/checkout/sessions/cs_test_unpaid", // a delayed method: not paid yet
			map[string]any{"status": "complete", "payment_status": "unpaid", "payment_intent": nil, "metadata": map[string]string{"payment_id": "pay_8"}},
			payment.Event{PaymentID: "pay_8", Ref: "cs_test_unpaid"}},
		{"checkout.session.expired", "/v1/checkout/sessions/cs_test_gone",
			map[string]any{"status": "expired", "payment_status": "unpaid", "payment_intent": nil, "metadata": map[string]string{"payment_id": "pay_7"}},
			payment.Event{Kind: payment.EventExpired, PaymentID: "pay_7", Ref: "cs_test_gone"}},
		{"payment_intent.payment_failed", "/v1/payment_intents/pi_test_refused",
			map[string]any{"metadata": map[string]string{"payment_id": "pay_6"}, "last_payment_error": map[string]any{"message": "Your card was declined.", "type": "card_error"}},
			payment.Event{Kind: payment.EventFailed, PaymentID: "pay_6", ChargeID: "pi_test_refused", Message: "Your card was declined."}},
		{"charge.refunded", "/v1/charges/ch_test_back",
			map[string]any{"payment_intent": "pi_test_back", "amount_refunded": 5_000, "currency": "usd"},
			payment.Event{Kind: payment.EventRefunded, ChargeID: "pi_test_back", RefundedCents: 5_000, Currency: "USD"}},
		{"customer.created", "/v1/customers/cus_test_1", nil, payment.Event{}},
	}
	for i, tc := range cases {
		obj := stripepaytest.Object(t, mock, tc.path, tc.change)
		id := "evt_" + string(rune('a'+i))
		payload := stripepaytest.Event(t, id, tc.typ, obj, now)
		got, err := p.ParseEvent(payload, stripepaytest.Sign(payload, stripepaytest.WebhookSecret, now))
		tc.want.ID, tc.want.Type = id, tc.typ
		if tc.want.Kind != "" || tc.want.Ref != "" {
			got.AmountCents, got.Currency = tc.want.AmountCents, tc.want.Currency // the fixture's, beside the point
		}
		if err != nil || got != tc.want {
			t.Errorf("%s reads as %+v, %v; want %+v", tc.typ, got, err, tc.want)
		}
	}
}

// stripeAnswers is a server answering as Stripe's API does, one answer
// per call in turn, and what it was asked.
type stripeAnswers struct {
	answers []stripeAnswer
	asked   []*http.Request
	bodies  []string // of the requests asked, in order
}

type stripeAnswer struct {
	status int
	header map[string]string
	body   string
}

func (s *stripeAnswers) serve(t *testing.T) string {
	t.Helper()
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if len(s.asked) >= len(s.answers) {
			t.Errorf("call %d (%s %s) has no answer", len(s.asked)+1, r.Method, r.URL.Path)
			w.WriteHeader(http.StatusTeapot)
			return
		}
		a := s.answers[len(s.asked)]
		s.asked = append(s.asked, r.Clone(context.Background()))
		body, _ := io.ReadAll(r.Body)
		s.bodies = append(s.bodies, string(body))
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A call Stripe could not make now is made again with the same
// idempotency key, and one Stripe refused is not: its error says why. A
// refund whose answer leaves it unknown whether it was made (a server
// error, which Stripe answers every repeat of the key with for a day) is
// looked for among the PaymentIntent's refunds by its key.
func TestStripeRetriesOnlyWhatMaySucceed(t *testing.T) {
	t.Parallel()
	const unavailable = `{"error":{"type":"api_error","message":"The server is temporarily unavailable."}}`
	none := stripeAnswer{status: 200, body: `{"object":"list","data":[],"has_more":false}`}
	refund := payment.Refund{ChargeID: "pi_1", AmountCents: 500, Currency: "USD", IdempotencyKey: "rf_7"}
	for _, tc := range []struct {
		name    string
		answers []stripeAnswer
		calls   int
		want    string // the refund's id, or what the error says
	}{
		{"unavailable, then made", []stripeAnswer{{status: 503, body: unavailable}, {status: 200, body: `{"id":"re_1","object":"refund"}`}}, 2, "re_1"},
		{"a conflict on the key, then made", []stripeAnswer{{status: 409, body: `{"error":{"type":"idempotency_error","message":"A request with this key is in progress."}}`},
			{status: 200, body: `{"id":"re_2","object":"refund"}`}}, 2, "re_2"},
		{"refused", []stripeAnswer{{status: 400, header: map[string]string{"Request-Id": "req_9"},
			body: `{"error":{"type":"invalid_request_error","code":"amount_too_large","param":"amount","message":"Refund amount is greater than unrefunded amount."}}`}},
			1, "400 invalid_request_error (amount_too_large) on amount: Refund amount is greater than unrefunded amount. [req_9]"},
		{"told not to retry", []stripeAnswer{{status: 503, header: map[string]string{"Stripe-Should-Retry": "false"}, body: unavailable}, none}, 2, "503 api_error"},
		{"a proxy's page", []stripeAnswer{{status: 502, body: "<html>Bad Gateway</html>"}, none}, 2, "stripe: refund 500 of pi_1: 502"},
		{"unavailable three times", []stripeAnswer{{status: 503, body: unavailable}, {status: 503, body: unavailable}, {status: 503, body: unavailable}, none}, 4, "503 api_error"},
		{"a server error, and made", []stripeAnswer{{status: 500, body: `{"error":{"type":"api_error","message":"An unknown error occurred"}}`},
			{status: 200, body: `{"object":"list","has_more":false,"data":[{"id":"re_3","object":"refund","amount":500,"status":"succeeded","metadata":{"domaind_refund":"rf_7"}}]}`}},
			2, "re_3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &stripeAnswers{answers: tc.answers}
			p := stripepay.New(stripepay.Options{SecretKey: stripepaytest.Key, APIURL: s.serve(t)})
			id, err := p.Refund(context.Background(), refund)
			got := id
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.want) || (err == nil) != strings.HasPrefix(tc.want, "re_") {
				t.Errorf("refund = %q, %v; want %q", id, err, tc.want)
			}
			if len(s.asked) != tc.calls {
				t.Errorf("%d calls, want %d", len(s.asked), tc.calls)
			}
			for i, r := range s.asked {
				if r.Method == http.MethodGet { // the look-up of the refund made
					if r.URL.Path != "/v1/refunds" || r.URL.Query().Get("payment_intent") != "pi_1" {
						t.Errorf("call %d is GET %s; want the PaymentIntent's refunds", i+1, r.URL)
					}
					continue
				}
				if r.Header.Get("Idempotency-Key") != "rf_7" || r.Header.Get("Authorization") != "Bearer "+stripepaytest.Key ||
					r.Header.Get("Stripe-Version") == "" {
					t.Errorf("call %d has headers %v; want the refund's key, the secret key as bearer and the API version", i+1, r.Header)
				}
			}
		})
	}
}

// A refund first asked for longer ago than Stripe keeps an idempotency
// key is looked for among the PaymentIntent's refunds, page by page, by
// the key in its metadata, and made only when none has it (one that
// failed gave nothing back); one of its amount carrying no key is for ops
// to check. A recent one is made at once, under its key, with the key in
// its metadata.
func TestStripeFindsARefundMadeUnderAKeyItForgot(t *testing.T) {
	t.Parallel()
	old := payment.Refund{ChargeID: "pi_1", AmountCents: 500, Currency: "USD", IdempotencyKey: "rf_old", Since: time.Now().Add(-25 * time.Hour)}
	recent := old
	recent.Since = time.Now().Add(-time.Hour)
	for _, tc := range []struct {
		name    string
		refund  payment.Refund
		answers []stripeAnswer
		calls   string // method and path of each call
		want    string
	}{
		{"made, on the second page", old, []stripeAnswer{
			{status: 200, body: `{"object":"list","data":[{"id":"re_a","object":"refund","metadata":{}}],"has_more":true}`},
			{status: 200, body: `{"object":"list","data":[{"id":"re_b","object":"refund","metadata":{"domaind_refund":"rf_old"}}],"has_more":false}`}},
			"GET /v1/refunds?limit=100&payment_intent=pi_1 GET /v1/refunds?limit=100&payment_intent=pi_1&starting_after=re_a", "re_b"},
		{"not made", old, []stripeAnswer{
			{status: 200, body: `{"object":"list","data":[{"id":"re_a","object":"refund","metadata":{"domaind_refund":"rf_other"}}],"has_more":false}`},
			{status: 200, body: `{"id":"re_new","object":"refund"}`}},
			"GET /v1/refunds?limit=100&payment_intent=pi_1 POST /v1/refunds", "re_new"},
		{"made, but failed", old, []stripeAnswer{
			{status: 200, body: `{"object":"list","data":[{"id":"re_f","object":"refund","amount":500,"status":"failed","metadata":{"domaind_refund":"rf_old"}}],"has_more":false}`},
			{status: 200, body: `{"id":"re_again","object":"refund"}`}},
			"GET /v1/refunds?limit=100&payment_intent=pi_1 POST /v1/refunds", "re_again"},
		{"one of its amount without a key", old, []stripeAnswer{
			{status: 200, body: `{"object":"list","data":[{"id":"re_u","object":"refund","amount":500,"status":"succeeded","created":` +
				strconv.FormatInt(time.Now().Add(-24*time.Hour).Unix(), 10) + `,"metadata":{}}],"has_more":false}`}},
			"GET /v1/refunds?limit=100&payment_intent=pi_1", "check it in Stripe's dashboard"},
		{"recent", recent, []stripeAnswer{{status: 200, body: `{"id":"re_now","object":"refund"}`}}, "POST /v1/refunds", "re_now"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &stripeAnswers{answers: tc.answers}
			p := stripepay.New(stripepay.Options{SecretKey: stripepaytest.Key, APIURL: s.serve(t)})
			id, err := p.Refund(context.Background(), tc.refund)
			if made := strings.HasPrefix(tc.want, "re_"); made && (err != nil || id != tc.want) || !made && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("refund = %q, %v; want %s", id, err, tc.want)
			}
			var calls []string
			for i, r := range s.asked {
				calls = append(calls, r.Method+" "+r.URL.RequestURI())
				if r.Method == http.MethodPost && (r.Header.Get("Idempotency-Key") != "rf_old" || !strings.Contains(s.bodies[i], "metadata%5Bdomaind_refund%5D=rf_old")) {
					t.Errorf("the refund was made with key %q and form %s; want its key, also in its metadata", r.Header.Get("Idempotency-Key"), s.bodies[i])
				}
			}
			if got := strings.Join(calls, " "); got != tc.calls {
				t.Errorf("calls %q, want %q", got, tc.calls)
			}
		})
	}
}

// Stripe refuses a page whose expiry is under 30 minutes away, and keeps
// nothing under the key for it: that refusal, and only it, is told apart
// (payment.ErrExpiryRefused) so that the page may be asked for again with
// a later time. Another refusal of the same call is not it.
func TestStripeTellsARefusedExpiryApart(t *testing.T) {
	t.Parallel()
	tooNear := `{"error":{"type":"invalid_request_error","param":"expires_at",` +
		`"message":"The ` + "`expires_at`" + ` timestamp must be at least 30 minutes from Checkout Session creation."}}`
	for _, tc := range []struct {
		name    string
		answer  stripeAnswer
		refused bool
	}{
		{"the expiry too near", stripeAnswer{status: 400, body: tooNear}, true},
		{"another parameter", stripeAnswer{status: 400, body: `{"error":{"type":"invalid_request_error","param":"success_url","message":"Not a valid URL"}}`}, false},
		{"the key used with other parameters", stripeAnswer{status: 400, body: `{"error":{"type":"idempotency_error",` +
			`"message":"Keys for idempotent requests can only be used with the same parameters they were first used with."}}`}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &stripeAnswers{answers: []stripeAnswer{tc.answer}}
			p := stripepay.New(stripepay.Options{SecretKey: stripepaytest.Key, APIURL: s.serve(t)})
			_, err := p.Redirect(context.Background(), payment.Redirect{PaymentID: "pay_1", IdempotencyKey: "pay_1", AmountCents: 100,
				Currency: "USD", SuccessURL: "https://x.test/", CancelURL: "https://x.test/", ExpiresAt: time.Now().Add(10 * time.Minute)})
			if err == nil || errors.Is(err, payment.ErrExpiryRefused) != tc.refused {
				t.Errorf("Redirect = %v; want an error, ErrExpiryRefused %v", err, tc.refused)
			}
		})
	}
}

// A key first used before refunds carried it in their metadata was used
// without it, and Stripe refuses the same key with other parameters: the
// refund is asked again as it was first, and Stripe answers that refund.
func TestStripeAsksARefundOfAnUntaggedKeyAsItWasFirst(t *testing.T) {
	t.Parallel()
	s := &stripeAnswers{answers: []stripeAnswer{
		{status: 400, body: `{"error":{"type":"idempotency_error","message":"Keys for idempotent requests can only be used with the same parameters they were first used with."}}`},
		{status: 200, body: `{"id":"re_first","object":"refund"}`}}}
	p := stripepay.New(stripepay.Options{SecretKey: stripepaytest.Key, APIURL: s.serve(t)})
	id, err := p.Refund(context.Background(), payment.Refund{ChargeID: "pi_1", AmountCents: 500, Currency: "USD", IdempotencyKey: "rf_before"})
	if err != nil || id != "re_first" {
		t.Errorf("refund = %q, %v; want re_first", id, err)
	}
	if len(s.bodies) != 2 || !strings.Contains(s.bodies[0], "domaind_refund") || strings.Contains(s.bodies[1], "domaind_refund") ||
		s.asked[1].Header.Get("Idempotency-Key") != "rf_before" {
		t.Errorf("asked %q; want the refund with its key in its metadata, then without, under the same key", s.bodies)
	}
}

// Stripe writes a related object as its id or, expanded, as the object:
// the session's PaymentIntent reads the same either way.
func TestStripeReadsExpandedObjects(t *testing.T) {
	t.Parallel()
	session := func(pi string) stripeAnswer {
		return stripeAnswer{status: 200, body: `{"id":"cs_1","object":"checkout.session","status":"complete","payment_status":"paid",
			"amount_total":1200,"currency":"eur","metadata":{"payment_id":"pay_1"},"payment_intent":` + pi + `}`}
	}
	s := &stripeAnswers{answers: []stripeAnswer{session(`"pi_1"`), session(`{"id":"pi_1","object":"payment_intent"}`), session(`null`)}}
	p := stripepay.New(stripepay.Options{SecretKey: stripepaytest.Key, APIURL: s.serve(t)})
	want := payment.Event{Type: "checkout.session (retrieved)", Kind: payment.EventPaid, PaymentID: "pay_1", Ref: "cs_1", ChargeID: "pi_1",
		AmountCents: 1200, Currency: "EUR"}
	for i, charge := range []string{"pi_1", "pi_1", ""} {
		want.ChargeID = charge
		if ev, err := p.Check(context.Background(), "cs_1"); err != nil || ev != want {
			t.Errorf("session %d reads as %+v, %v; want %+v", i+1, ev, err, want)
		}
	}
	if len(s.asked) != 3 || s.asked[0].Method != http.MethodGet || s.asked[0].URL.Path != "/v1/checkout/sessions/cs_1" {
		t.Errorf("asked %d times, first %s %s; want GET /v1/checkout/sessions/cs_1", len(s.asked), s.asked[0].Method, s.asked[0].URL.Path)
	}
}

// While a signing secret is rolled, Stripe signs with both: one
// signature that matches is enough.
func TestStripeNoticeSignedWithTwoSecrets(t *testing.T) {
	t.Parallel()
	p := stripepay.New(stripepay.Options{SecretKey: stripepaytest.Key, WebhookSecret: stripepaytest.WebhookSecret})
	now := time.Now()
	payload := stripepaytest.Event(t, "evt_roll", "customer.created", map[string]any{"id": "cus_1", "object": "customer"}, now)
	good := stripepaytest.Sign(payload, stripepaytest.WebhookSecret, now)
	old := stripepaytest.Sign(payload, "whsec_old", now)
	_, oldSig, _ := strings.Cut(old, ",v1=")
	if ev, err := p.ParseEvent(payload, good+",v1="+oldSig); err != nil || ev.ID != "evt_roll" {
		t.Errorf("signed with the new and the old secret: %+v, %v", ev, err)
	}
	if _, err := p.ParseEvent(payload, old); !errors.Is(err, payment.ErrBadSignature) {
		t.Errorf("signed with the old secret alone: %v, want ErrBadSignature", err)
	}
	if _, err := p.ParseEvent(payload, stripepaytest.Sign(payload, stripepaytest.WebhookSecret, now.Add(10*time.Minute))); !errors.Is(err, payment.ErrBadSignature) {
		t.Errorf("signed ten minutes ahead: %v, want ErrBadSignature", err)
	}
}
