package partnerclient

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGetJSON(t *testing.T) {
	srv := newServer(t, &answer{status: 200, body: `{"available":true,"price_cents":250000}`})
	c := New(srv.URL, "pk_test_1", "sk_test")
	var got struct {
		Available  bool  `json:"available"`
		PriceCents int64 `json:"price_cents"`
	}
	if err := c.GetJSON(context.Background(), "/api/partner/v1/availability", url.Values{"domain": {"red car.com"}}, &got); err != nil {
		t.Fatal(err)
	}
	if !got.Available || got.PriceCents != 250000 {
		t.Errorf("decoded %+v", got)
	}
	r := srv.got()[0]
	if r.method != "GET" || r.rawQuery != "domain=red%20car.com" || len(r.body) != 0 || r.header.Get("Content-Type") != "" {
		t.Errorf("sent %s ?%s body %q Content-Type %q", r.method, r.rawQuery, r.body, r.header.Get("Content-Type"))
	}
	checkSigned(t, r, "sk_test")
}

func TestPostJSON(t *testing.T) {
	srv := newServer(t, &answer{status: 201, body: `{"public_id":"ord_1","status":"EXTERNALLY_PAID"}`})
	c := New(srv.URL, "pk_test_1", "sk_test")
	in := map[string]string{"quote_id": "q_1", "external_payment_ref": "pi_1"}
	var out struct {
		PublicID string `json:"public_id"`
	}
	if err := c.PostJSON(context.Background(), "/api/partner/v1/orders", in, &out, WithIdempotencyKey("order-q_1")); err != nil {
		t.Fatal(err)
	}
	r := srv.got()[0]
	if out.PublicID != "ord_1" {
		t.Errorf("decoded %+v", out)
	}
	if string(r.body) != `{"external_payment_ref":"pi_1","quote_id":"q_1"}` || r.header.Get("Content-Type") != "application/json" || r.header.Get("Idempotency-Key") != "order-q_1" {
		t.Errorf("sent body %s, Content-Type %q, Idempotency-Key %q", r.body, r.header.Get("Content-Type"), r.header.Get("Idempotency-Key"))
	}
	checkSigned(t, r, "sk_test")
	if err := c.PostJSON(context.Background(), "/api/partner/v1/orders", func() {}, nil); err == nil {
		t.Error("PostJSON encoded a func")
	}
}

func TestAPIError(t *testing.T) {
	tests := []struct {
		name   string
		answer answer
		want   *APIError
	}{
		{"typed", answer{status: 401, body: `{"error":{"code":"invalid_signature","message":"signature does not match"}}`},
			&APIError{Status: 401, Code: "invalid_signature", Message: "signature does not match"}},
		{"with field", answer{status: 400, body: `{"error":{"code":"validation_error","message":"required","field":"q"}}`},
			&APIError{Status: 400, Code: "validation_error", Message: "required", Field: "q"}},
		{"no message", answer{status: 403, body: `{"error":{"code":"forbidden"}}`},
			&APIError{Status: 403, Code: "forbidden", Message: "Forbidden"}},
		{"legacy shape", answer{status: 400, body: `{"error":"bad domain"}`},
			&APIError{Status: 400, Message: "Bad Request"}},
		{"not JSON", answer{status: 502, body: `<html>Bad gateway</html>`},
			&APIError{Status: 502, Message: "Bad Gateway"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, &tt.answer)
			c := New(srv.URL, "pk_test_1", "sk_test", WithRetryPolicy(RetryPolicy{MaxAttempts: 1}))
			err := c.GetJSON(context.Background(), "/api/partner/v1/orders", nil, nil)
			var got *APIError
			if !errors.As(err, &got) {
				t.Fatalf("GetJSON = %v; want an *APIError", err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("APIError (-want +got):\n%s", d)
			}
		})
	}
}

func TestGetJSONRefusesBadJSON(t *testing.T) {
	srv := newServer(t, &answer{status: 200, body: `{"available":`})
	var out struct{}
	if err := New(srv.URL, "pk", "sk").GetJSON(context.Background(), "/api/partner/v1/availability", nil, &out); err == nil {
		t.Error("GetJSON decoded a truncated body")
	}
}
