// Package stripepaytest makes Stripe's notices for tests: events whose
// objects are as Stripe's API mock (stripe-mock) answers them, in Stripe's
// own shapes, signed as Stripe signs a webhook (the Stripe-Signature
// header: a timestamp and an HMAC-SHA256 of it and the payload).
package stripepaytest

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/domaind/domaind/internal/secret"
)

// Key is the API key tests give stripe-mock, which takes any test key.
const Key = "sk_test_domaind"

// WebhookSecret is the signing key of the tests' webhook endpoint.
const WebhookSecret = "whsec_domaind_test"

// Object returns the API object at path (such as
// /v1/checkout/sessions/cs_test_1) as stripe-mock at mockURL answers it,
// with change applied: Stripe's shape, with the values a test sets.
func Object(tb testing.TB, mockURL, path string, change map[string]any) map[string]any {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, mockURL+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.SetBasicAuth(Key, "")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("stripe-mock %s: %v", path, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil || res.StatusCode != http.StatusOK {
		tb.Fatalf("stripe-mock %s: %d %s", path, res.StatusCode, body)
	}
	for k, v := range change {
		obj[k] = v
	}
	return obj
}

// Event is the payload of a Stripe event id of type typ about obj, as
// Stripe posts it to a webhook endpoint.
func Event(tb testing.TB, id, typ string, obj map[string]any, created time.Time) []byte {
	tb.Helper()
	b, err := json.Marshal(map[string]any{"id": id, "object": "event", "api_version": stripe.APIVersion, "created": created.Unix(),
		"livemode": false, "pending_webhooks": 1, "request": map[string]any{"id": nil, "idempotency_key": nil}, "type": typ,
		"data": map[string]any{"object": obj}})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Sign returns the Stripe-Signature header of payload signed with secret
// at t.
func Sign(payload []byte, secret string, t time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: t}).Header
}

// PaidSession is a completed, paid Checkout Session ref of payment
// paymentID, for amount cents of currency (lower case, as Stripe writes
// it), taken by PaymentIntent pi.
func PaidSession(tb testing.TB, mockURL, ref, paymentID, pi string, amount int64, currency string) map[string]any {
	return Object(tb, mockURL, "/v1/checkout/sessions/"+ref, map[string]any{"status": "complete", "payment_status": "paid",
		"amount_total": amount, "currency": currency, "payment_intent": pi, "metadata": map[string]string{"payment_id": paymentID}})
}

// NewID is a new random id of prefix, as Stripe's are (evt_…, pi_…).
func NewID(prefix string) string { return secret.NewID(prefix + "_") }
