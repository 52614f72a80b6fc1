package stripepay_test

import (
	"context"
	"errors"
	"strings"
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
