package partnerclient

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/hmacsig"
	"github.com/domaind/domaind/internal/hmacsig/hmacsigtest"
	"github.com/domaind/domaind/internal/httpserver"
)

// received is one request as the server saw it.
type received struct {
	method, path, rawQuery string
	header                 http.Header
	body                   []byte
}

// server records the requests it gets and answers each with the next of
// answers (the last one repeats). An answer of nil cuts the connection.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []received
}

type answer struct {
	status int
	header map[string]string
	body   string
}

func newServer(tb testing.TB, answers ...*answer) *server {
	tb.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, received{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), body})
		s.mu.Unlock()
		a := answers[min(n, len(answers)-1)]
		if a == nil {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	tb.Cleanup(s.Close)
	return s
}

func (s *server) got() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.requests...)
}

// checkSigned fails unless r carries a valid signature under secret, checked
// the way the server checks it.
func checkSigned(tb testing.TB, r received, secret string) {
	tb.Helper()
	q, err := hmacsig.CanonicalQuery(r.rawQuery)
	if err != nil || q != r.rawQuery {
		tb.Errorf("query sent %q is not canonical (canonical: %q, %v)", r.rawQuery, q, err)
	}
	cs := hmacsig.CanonicalString(r.method, r.path, q, r.header.Get(hmacsig.HeaderTimestamp), r.header.Get(hmacsig.HeaderNonce), r.body)
	if err := hmacsig.CheckSignature([]byte(secret), cs, r.header.Get(hmacsig.HeaderSignature)); err != nil {
		tb.Errorf("%s %s: %v", r.method, r.path, err)
	}
}

var fast = WithRetryPolicy(RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Second})

// The client sends each vector's canonical query and signature, byte for byte.
func TestRequestsMatchVectors(t *testing.T) {
	for _, v := range hmacsigtest.Load(t).Requests {
		t.Run(v.Name, func(t *testing.T) {
			srv := newServer(t, &answer{status: 200})
			ts, _ := strconv.ParseInt(v.Timestamp, 10, 64)
			query, err := url.ParseQuery(v.Query)
			if err != nil {
				t.Fatal(err)
			}
			c := New(srv.URL, "pk_test_1", v.Secret,
				WithClock(func() time.Time { return time.Unix(ts, 0) }),
				WithNonces(func() string { return v.Nonce }))
			if _, _, err := c.Do(context.Background(), v.Method, v.Path, query, []byte(v.Body)); err != nil {
				t.Fatal(err)
			}
			r := srv.got()[0]
			want := received{method: http.MethodGet, path: v.Path, rawQuery: v.CanonicalQuery, body: []byte(v.Body)}
			if v.Method != "get" {
				want.method = v.Method
			}
			if r.method != want.method || r.path != want.path || r.rawQuery != want.rawQuery || string(r.body) != v.Body {
				t.Errorf("sent %s %s?%s %q; want %s %s?%s %q", r.method, r.path, r.rawQuery, r.body, want.method, want.path, want.rawQuery, want.body)
			}
			headers := map[string]string{
				hmacsig.HeaderKeyID:     "pk_test_1",
				hmacsig.HeaderTimestamp: v.Timestamp,
				hmacsig.HeaderNonce:     v.Nonce,
				hmacsig.HeaderSignature: v.Signature,
			}
			for k, want := range headers {
				if got := r.header.Get(k); got != want {
					t.Errorf("%s = %q; want %q", k, got, want)
				}
			}
			if ct := r.header.Get("Content-Type"); (v.Body != "") != (ct == "application/json") {
				t.Errorf("Content-Type = %q with body %q", ct, v.Body)
			}
		})
	}
}

// The client sends every query vector in its canonical form, and refuses
// to sign values that are not UTF-8.
func TestQueriesMatchVectors(t *testing.T) {
	srv := newServer(t, &answer{status: 200})
	c := New(srv.URL, "pk_test_1", "sk")
	for _, v := range hmacsigtest.Load(t).Queries {
		query, err := url.ParseQuery(v.Raw)
		if err != nil {
			continue // a malformed escape: there are no values to send
		}
		t.Run(v.Name, func(t *testing.T) {
			before := len(srv.got())
			_, _, err := c.Do(context.Background(), "GET", "/api/partner/v1/domains/search", query, nil)
			if v.Canonical == nil {
				if err == nil || len(srv.got()) != before {
					t.Errorf("Do sent values %q that are not UTF-8 (err %v)", query, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := srv.got()[before].rawQuery; got != *v.Canonical {
				t.Errorf("sent query %q; want %q", got, *v.Canonical)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	ok := &answer{status: 200, body: `{}`}
	unavailable := &answer{status: 503}
	tests := []struct {
		name          string
		answers       []*answer
		method        string
		opts          []CallOption
		wantAttempts  int
		wantStatus    int // 0: an error
		wantIdemKey   string
		wantGenerated bool // an Idempotency-Key was made up for the call
	}{
		{"5xx then success", []*answer{unavailable, {status: 500}, ok}, "POST", nil, 3, 200, "", true},
		{"given idempotency key", []*answer{unavailable, ok}, "POST", []CallOption{WithIdempotencyKey("order-42")}, 2, 200, "order-42", false},
		{"GET has no key", []*answer{unavailable, ok}, "GET", nil, 2, 200, "", false},
		{"429 with Retry-After 0", []*answer{{status: 429, header: map[string]string{"Retry-After": "0"}}, ok}, "GET", nil, 2, 200, "", false},
		{"network error", []*answer{nil, ok}, "POST", nil, 2, 200, "", true},
		{"gives up on 5xx", []*answer{unavailable}, "GET", nil, 3, 503, "", false},
		{"gives up on network errors", []*answer{nil}, "GET", nil, 3, 0, "", false},
		{"4xx is not retried", []*answer{{status: 401}, ok}, "GET", nil, 1, 401, "", false},
		{"409 is not retried", []*answer{{status: 409}, ok}, "POST", nil, 1, 409, "", true},
		{"Retry-After beyond MaxDelay", []*answer{{status: 429, header: map[string]string{"Retry-After": "3"}}, ok}, "GET", nil, 1, 429, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.answers...)
			var clock int64 = 1767225600
			var mu sync.Mutex
			c := New(srv.URL, "pk_test_1", "sk_test", fast, WithClock(func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				clock++
				return time.Unix(clock, 0)
			}))
			resp, _, err := c.Do(context.Background(), tt.method, "/api/partner/v1/orders", nil, []byte(`{"quote_id":"q_1"}`), tt.opts...)
			switch {
			case tt.wantStatus == 0 && err == nil:
				t.Errorf("Do = %d; want an error", resp.StatusCode)
			case tt.wantStatus != 0 && (err != nil || resp.StatusCode != tt.wantStatus):
				t.Errorf("Do = %v, %v; want status %d", resp, err, tt.wantStatus)
			}
			got := srv.got()
			if len(got) != tt.wantAttempts {
				t.Fatalf("%d attempts; want %d", len(got), tt.wantAttempts)
			}
			nonces, stamps := map[string]bool{}, map[string]bool{}
			key := got[0].header.Get("Idempotency-Key")
			for _, r := range got {
				checkSigned(t, r, "sk_test")
				nonces[r.header.Get(hmacsig.HeaderNonce)] = true
				stamps[r.header.Get(hmacsig.HeaderTimestamp)] = true
				if k := r.header.Get("Idempotency-Key"); k != key {
					t.Errorf("Idempotency-Key changed from %q to %q", key, k)
				}
			}
			if len(nonces) != len(got) || len(stamps) != len(got) {
				t.Errorf("%d attempts used %d nonces and %d timestamps; want fresh ones each time", len(got), len(nonces), len(stamps))
			}
			switch {
			case tt.wantIdemKey != "" && key != tt.wantIdemKey:
				t.Errorf("Idempotency-Key = %q; want %q", key, tt.wantIdemKey)
			case tt.wantIdemKey == "" && tt.wantGenerated != (key != ""):
				t.Errorf("Idempotency-Key = %q; generated want %v", key, tt.wantGenerated)
			}
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	srv := newServer(t, &answer{status: 429, header: map[string]string{"Retry-After": "1"}}, &answer{status: 200})
	c := New(srv.URL, "pk_test_1", "sk_test", fast)
	start := time.Now()
	resp, _, err := c.Do(context.Background(), "GET", "/api/partner/v1/pricing", url.Values{"domain": {"a.com"}}, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("Do = %v, %v", resp, err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("retried after %v; Retry-After said 1s", waited)
	}
}

func TestCancelStopsRetrying(t *testing.T) {
	srv := newServer(t, &answer{status: 503})
	c := New(srv.URL, "pk_test_1", "sk_test", WithRetryPolicy(RetryPolicy{MaxAttempts: 5, BaseDelay: time.Hour, MaxDelay: time.Hour}))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _, err := c.Do(ctx, "GET", "/api/partner/v1/pricing", nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) || len(srv.got()) != 1 {
		t.Errorf("Do = %v after %d attempts; want the deadline after 1", err, len(srv.got()))
	}
}

func TestBaseURLAndPath(t *testing.T) {
	srv := newServer(t, &answer{status: 200})
	tests := []struct {
		name, base, path, want string
	}{
		{"root", srv.URL, "/api/partner/v1/domains/search", "/api/partner/v1/domains/search"},
		{"root with slash", srv.URL + "/", "/api/partner/v1/orders", "/api/partner/v1/orders"},
		{"prefix", srv.URL + "/domaind/", "/api/partner/webhooks", "/domaind/api/partner/webhooks"},
		{"escaped in path", srv.URL, "/api/partner/v1/domains/café.com", "/api/partner/v1/domains/caf%C3%A9.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(srv.got())
			if _, _, err := New(tt.base, "pk", "sk").Do(context.Background(), "GET", tt.path, nil, nil); err != nil {
				t.Fatal(err)
			}
			r := srv.got()[before]
			if r.path != tt.want {
				t.Errorf("path sent %q; want %q", r.path, tt.want)
			}
			checkSigned(t, r, "sk")
		})
	}
	for _, base := range []string{"", "domaind.example", "ftp://domaind.example", "http://[::1"} {
		if _, _, err := New(base, "pk", "sk").Do(context.Background(), "GET", "/api/partner/v1/orders", nil, nil); err == nil {
			t.Errorf("base URL %q: Do succeeded", base)
		}
	}
	if _, _, err := New(srv.URL, "pk", "sk").Do(context.Background(), "GET", "api/partner/v1/orders", nil, nil); err == nil {
		t.Error("a path without / was sent")
	}
}

func TestBackoff(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 10, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	tests := []struct {
		attempt  int
		min, max time.Duration
	}{
		{1, 50 * time.Millisecond, 100 * time.Millisecond},
		{2, 100 * time.Millisecond, 200 * time.Millisecond},
		{3, 200 * time.Millisecond, 400 * time.Millisecond},
		{5, 500 * time.Millisecond, time.Second},
		{60, 500 * time.Millisecond, time.Second},
	}
	for _, tt := range tests {
		seen := map[time.Duration]bool{}
		for range 100 {
			d := p.backoff(tt.attempt)
			if d < tt.min || d > tt.max {
				t.Fatalf("backoff(%d) = %v; want within [%v, %v]", tt.attempt, d, tt.min, tt.max)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("backoff(%d) took %d values in 100 draws; want jitter", tt.attempt, len(seen))
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name, header string
		want         time.Duration
		wantOK       bool
	}{
		{"seconds", "7", 7 * time.Second, true},
		{"zero", "0", 0, true},
		{"HTTP date", "Thu, 01 Jan 2026 00:00:30 GMT", 30 * time.Second, true},
		{"date in the past", "Wed, 31 Dec 2025 23:00:00 GMT", 0, true},
		{"absent", "", 0, false},
		{"negative", "-5", 0, false},
		{"fraction", "1.5", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := retryAfter(tt.header, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", tt.header, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// Clients busy with more calls at once than the server lets one address
// hold open no more connections together than that, and keep them for the
// next calls.
func TestConnectionsStayWithinTheServersCap(t *testing.T) {
	t.Parallel()
	if MaxConns != httpserver.MaxConnsPerClient {
		t.Fatalf("MaxConns = %d, want the server's cap per client address, %d", MaxConns, httpserver.MaxConnsPerClient)
	}
	var opened atomic.Int32
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{}") }))
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			opened.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	// A partner's two environments, in three waves of twice as many calls
	// at once from each.
	clients := []*Client{New(s.URL, "pk_test_1", "secret"), New(s.URL, "pk_live_1", "secret")}
	const calls = 3 * 2 * 2 * MaxConns
	for range 3 {
		var wg sync.WaitGroup
		for _, c := range clients {
			for range 2 * MaxConns {
				wg.Go(func() {
					if err := c.GetJSON(context.Background(), "/api/partner/v1/pricing", nil, nil); err != nil {
						t.Error(err)
					}
				})
			}
		}
		wg.Wait()
	}
	if n := opened.Load(); n > MaxConns {
		t.Errorf("%d calls opened %d connections; want at most %d", calls, n, MaxConns)
	}
}

// A program that wrapped http.DefaultTransport (to trace its calls, say)
// has its Clients' calls go through its wrapper. (Not parallel: it
// replaces http.DefaultTransport while it runs.)
func TestAWrappedDefaultTransportIsKept(t *testing.T) {
	s := newServer(t, &answer{status: 200, body: "{}"})
	base := http.DefaultTransport
	var through atomic.Int32
	http.DefaultTransport = roundTripper(func(r *http.Request) (*http.Response, error) {
		through.Add(1)
		return base.RoundTrip(r)
	})
	t.Cleanup(func() { http.DefaultTransport = base })
	if err := New(s.URL, "pk_test_1", "secret").GetJSON(context.Background(), "/api/partner/v1/pricing", nil, nil); err != nil {
		t.Fatal(err)
	}
	if through.Load() != 1 {
		t.Errorf("%d calls went through the program's transport, want 1", through.Load())
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
