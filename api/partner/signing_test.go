package partner_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/api/partner"
	"github.com/domaind/domaind/internal/hmacsig"
	partners "github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/models"
)

// typedCode reads the code and message of a typed error body.
func typedCode(t *testing.T, a answer) (code, message string) {
	t.Helper()
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(a.body, &body); err != nil || body.Error.Code == "" {
		t.Fatalf("%d %q is not a typed error", a.status, a.body)
	}
	return body.Error.Code, body.Error.Message
}

// TestSigningMatrix sends each way a request can be wrongly signed, and the
// near misses that must pass, through the whole service.
func TestSigningMatrix(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addSandbox("cheapflightsnow.com", 120_000)
	cred := e.credential(models.EnvSandbox)
	other := e.credential(models.EnvSandbox)
	const search = "/api/partner/v1/domains/search?q=flights"

	cases := []struct {
		name   string
		mutate func(s *signed)
		status int
		code   string
	}{
		{"well signed", func(s *signed) {}, 200, ""},
		{"no key id", func(s *signed) { s.keyID = "" }, 401, "missing_credentials"},
		{"no timestamp", func(s *signed) { s.timestamp = "" }, 401, "missing_signature_headers"},
		{"no nonce", func(s *signed) { s.nonce = "" }, 401, "missing_signature_headers"},
		{"no signature", func(s *signed) { s.secret = "" }, 401, "invalid_signature"},
		{"299 s ahead", func(s *signed) { s.timestamp = unix(e.now.Add(299 * time.Second)) }, 200, ""},
		{"299 s behind", func(s *signed) { s.timestamp = unix(e.now.Add(-299 * time.Second)) }, 200, ""},
		{"301 s ahead", func(s *signed) { s.timestamp = unix(e.now.Add(301 * time.Second)) }, 401, "invalid_timestamp"},
		{"301 s behind", func(s *signed) { s.timestamp = unix(e.now.Add(-301 * time.Second)) }, 401, "invalid_timestamp"},
		{"milliseconds", func(s *signed) { s.timestamp = strconv.FormatInt(e.now.UnixMilli(), 10) }, 401, "invalid_timestamp"},
		{"fractional seconds", func(s *signed) { s.timestamp = unix(e.now) + ".5" }, 401, "invalid_timestamp"},
		{"altered query", func(s *signed) { s.target = "/api/partner/v1/domains/search?q=hotels" }, 401, "invalid_signature"},
		{"extra parameter", func(s *signed) { s.target = search + "&limit=50" }, 401, "invalid_signature"},
		{"reordered query", func(s *signed) {
			s.signedTarget = "/api/partner/v1/domains/search?a=1&q=flights"
			s.target = "/api/partner/v1/domains/search?q=flights&a=1"
		}, 200, ""},
		{"repeated parameter", func(s *signed) { s.target, s.signedTarget = search+"&q=hotels", search+"&q=hotels" }, 400, "validation_error"},
		// Go's query parser drops a pair with a ";", which the signature
		// covers: the handler would answer the search for flights.
		{"a pair with a semicolon", func(s *signed) { s.target, s.signedTarget = search+"&x=1;q=hotels", search+"&x=1;q=hotels" }, 400, "validation_error"},
		{"unknown key", func(s *signed) { s.keyID = "pk_test_" + "0000000000000000000000" }, 401, "invalid_signature"},
		{"key id not UTF-8", func(s *signed) { s.keyID = "pk_test_\xff" }, 401, "invalid_signature"}, // Postgres refuses to look it up
		{"another key's secret", func(s *signed) { s.secret = other.Secret }, 401, "invalid_signature"},
		{"a live key id for a sandbox key", func(s *signed) { s.keyID = "pk_live_" + cred.KeyID[len("pk_test_"):] }, 401, "invalid_signature"},
	}
	for _, tc := range cases {
		s := e.sign(cred, "GET", search, nil)
		tc.mutate(s)
		if s.secret == "" { // a signature header that is there but empty is missing
			r := e.request(s)
			r.Header.Del(hmacsig.HeaderSignature)
			got := e.send(r)
			if code, _ := typedCode(t, got); got.status != 401 || code != "missing_signature_headers" {
				t.Errorf("%s: %d %s, want 401 missing_signature_headers", tc.name, got.status, code)
			}
			continue
		}
		got := e.send(e.request(s))
		if tc.status == 200 {
			if got.status != 200 {
				t.Errorf("%s: %d %s, want 200", tc.name, got.status, got.body)
			}
			continue
		}
		if code, _ := typedCode(t, got); got.status != tc.status || code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, got.status, code, tc.status, tc.code)
		}
	}
}

// A HEAD is signed as HEAD, the method sent: it is answered as its GET
// without the body, and a signature of the GET does not stand for it.
func TestHeadIsSignedAsSent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cred := e.credential(models.EnvSandbox)
	const search = "/api/partner/v1/domains/search?q=flights"
	if got := e.send(e.request(e.sign(cred, "HEAD", search, nil))); got.status != 200 || len(got.body) != 0 {
		t.Errorf("a signed HEAD = %d %q, want 200 and no body", got.status, got.body)
	}
	asGet := e.sign(cred, "GET", search, nil)
	r := e.request(asGet)
	r.Method = "HEAD"
	if got := e.send(r); got.status != 401 {
		t.Errorf("a HEAD carrying a GET's signature = %d, want 401", got.status)
	}
}

func unix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

// TestAlteredBodyAndUnknownKeyReadAlike: a body changed after signing is a
// bad signature, and an unknown key is answered exactly as a wrong
// signature, so key ids cannot be probed.
func TestAlteredBodyAndUnknownKeyReadAlike(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cred := e.credential(models.EnvSandbox)
	s := e.sign(cred, "PUT", "/api/partner/webhooks", []byte(`{"url":"https://hooks.partner.example/a","secret":"whsec_0123456789abcdef"}`))
	s.body = []byte(`{"url":"https://hooks.attacker.example/a","secret":"whsec_0123456789abcdef"}`)
	altered := e.send(e.request(s))
	code, msg := typedCode(t, altered)
	if altered.status != 401 || code != "invalid_signature" {
		t.Fatalf("altered body: %d %s, want 401 invalid_signature", altered.status, code)
	}
	var n int64
	e.db.Model(&models.WebhookEndpoint{}).Count(&n)
	if n != 0 {
		t.Errorf("%d webhook endpoints after a refused request, want none", n)
	}
	s = e.sign(cred, "PUT", "/api/partner/webhooks", []byte(`{"url":"https://hooks.partner.example/a","secret":"whsec_0123456789abcdef"}`))
	s.keyID = "pk_test_nosuchkey00000000000"
	unknown := e.send(e.request(s))
	ucode, umsg := typedCode(t, unknown)
	if unknown.status != altered.status || ucode != code || umsg != msg {
		t.Errorf("unknown key: %d %s %q; wrong signature: %d %s %q; want them alike", unknown.status, ucode, umsg, altered.status, code, msg)
	}
}

// TestRevokedKeyIsRefused: a key works until ops revoke it.
func TestRevokedKeyIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cred := e.credential(models.EnvSandbox)
	c := e.client(cred, 0)
	ctx := context.Background()
	if err := c.GetJSON(ctx, "/api/partner/v1/availability", map[string][]string{"domain": {"example.com"}}, nil); err != nil {
		t.Fatalf("before revocation: %v", err)
	}
	if err := e.partners.Revoke(ctx, e.partnerOf(cred), cred.KeyID); err != nil {
		t.Fatal(err)
	}
	err := c.GetJSON(ctx, "/api/partner/v1/availability", map[string][]string{"domain": {"example.com"}}, nil)
	wantAPIError(t, "after revocation", err, 401, "invalid_signature")
}

// TestReplayIsRefused: a nonce passes once, also when the same request is
// sent many times at once, and a refused request does not spend it.
func TestReplayIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cred := e.credential(models.EnvSandbox)
	s := e.sign(cred, "GET", "/api/partner/v1/availability?domain=example.com", nil)

	forged := *s
	forged.secret = "sk_wrong"
	if got := e.send(e.request(&forged)); got.status != 401 {
		t.Fatalf("forged: %d", got.status)
	}
	if got := e.send(e.request(s)); got.status != 200 {
		t.Fatalf("first use of a nonce a forged request carried: %d %s, want 200", got.status, got.body)
	}
	got := e.send(e.request(s))
	if code, _ := typedCode(t, got); got.status != 401 || code != "replay_detected" {
		t.Errorf("replay: %d %s, want 401 replay_detected", got.status, code)
	}

	s = e.sign(cred, "GET", "/api/partner/v1/availability?domain=example.com", nil)
	statuses := make([]int, 12)
	parallel(len(statuses), func(i int) { statuses[i] = e.send(e.request(s)).status })
	passed := 0
	for _, st := range statuses {
		switch st {
		case 200:
			passed++
		case 401:
		default:
			t.Errorf("concurrent replay answered %d", st)
		}
	}
	if passed != 1 {
		t.Errorf("%d of %d concurrent requests with one nonce passed, want exactly 1", passed, len(statuses))
	}
}

// TestEachScopeIsNeeded: every route refuses a credential lacking its
// scope, naming it, and lets in one that has only that scope.
func TestEachScopeIsNeeded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	routes := []struct{ scope, method, target, body string }{
		{partners.ScopeSearch, "GET", "/api/partner/v1/domains/search?q=coffee", ""},
		{partners.ScopeSearch, "GET", "/api/partner/v1/domains/example.com", ""},
		{partners.ScopeSearch, "GET", "/api/partner/v1/availability?domain=example.com", ""},
		{partners.ScopeSearch, "GET", "/api/partner/v1/pricing?domain=example.com", ""},
		{partners.ScopeWebhook, "PUT", "/api/partner/webhooks", `{"url":"https://hooks.partner.example/in","secret":"whsec_0123456789abcdef"}`},
		{partners.ScopeWebhook, "POST", "/api/partner/v1/webhooks/test", ""},
		{partners.ScopeWebhook, "GET", "/api/partner/v1/events", ""},
		{partners.ScopeWebhook, "POST", "/api/partner/v1/events/evt_none/redeliver", ""},
		{partners.ScopeBuy, "GET", "/api/partner/v1/settlements", ""},
		{partners.ScopeReport, "GET", "/api/partner/v1/transactions", ""},
		{partners.ScopeReport, "GET", "/api/partner/v1/payouts", ""},
		{partners.ScopeBroker, "GET", "/api/partner/v1/brokerage/eligibility?domain=example.com", ""},
		{partners.ScopeBroker, "POST", "/api/partner/v1/brokerage", `{"domain":"example.com","tier":"managed","buyer_email":"ada@buyer.example","budget_cents":100}`},
		{partners.ScopeBroker, "GET", "/api/partner/v1/brokerage/bc_none", ""},
		{partners.ScopeReport, "GET", "/api/partner/v1/brokerage", ""},
	}
	for _, r := range routes {
		var others []string
		for _, sc := range partners.AllScopes {
			if sc != r.scope {
				others = append(others, sc)
			}
		}
		without := e.credential(models.EnvSandbox, others...)
		got := e.send(e.request(e.sign(without, r.method, r.target, []byte(r.body))))
		code, msg := typedCode(t, got)
		if got.status != 403 || code != "forbidden" || !strings.Contains(msg, r.scope) {
			t.Errorf("%s %s without %s: %d %s %q, want 403 forbidden naming the scope", r.method, r.target, r.scope, got.status, code, msg)
		}
		only := e.credential(models.EnvSandbox, r.scope)
		if got := e.send(e.request(e.sign(only, r.method, r.target, []byte(r.body)))); got.status == 403 || got.status == 401 {
			t.Errorf("%s %s with only %s: %d %s", r.method, r.target, r.scope, got.status, got.body)
		}
	}
}

// TestRateLimitPerCredential: answers carry the RateLimit headers of the
// credential's own limit; past it, 429 with Retry-After, and another
// credential is unaffected.
func TestRateLimitPerCredential(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cred, other := e.credential(models.EnvSandbox), e.credential(models.EnvSandbox)
	got := e.send(e.request(e.sign(cred, "GET", "/api/partner/v1/availability?domain=example.com", nil)))
	if got.status != 200 || got.header.Get("RateLimit-Limit") != "600" || got.header.Get("RateLimit-Remaining") != "599" ||
		got.header.Get("RateLimit-Policy") != "600;w=60" {
		t.Fatalf("first request: %d, RateLimit headers %v", got.status, got.header)
	}
	// Spend the rest of the minute's allowance as 599 more requests would.
	limiter := ratelimit.New(e.redis.Client, e.clock)
	for range 599 {
		if _, err := limiter.Allow(context.Background(), partner.Limit, cred.KeyID); err != nil {
			t.Fatal(err)
		}
	}
	got = e.send(e.request(e.sign(cred, "GET", "/api/partner/v1/availability?domain=example.com", nil)))
	if code, _ := typedCode(t, got); got.status != http.StatusTooManyRequests || code != "rate_limited" || got.header.Get("Retry-After") == "" {
		t.Errorf("601st request: %d %s Retry-After %q, want 429 rate_limited with Retry-After", got.status, code, got.header.Get("Retry-After"))
	}
	if got := e.send(e.request(e.sign(other, "GET", "/api/partner/v1/availability?domain=example.com", nil))); got.status != 200 {
		t.Errorf("another credential: %d, want 200", got.status)
	}
}

// TestNoSessionCookieOrCORS: a partner answer sets no cookie and no CORS
// header, even to a request from a browser origin carrying a cookie.
func TestNoSessionCookieOrCORS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cred := e.credential(models.EnvSandbox)
	for _, signedOK := range []bool{true, false} {
		s := e.sign(cred, "GET", "/api/partner/v1/availability?domain=example.com", nil)
		if !signedOK {
			s.secret = "sk_wrong"
		}
		r := e.request(s)
		r.Header.Set("Origin", "https://shop.example")
		r.Header.Set("Cookie", "domaind_session=whatever")
		got := e.send(r)
		if got.header.Get("Set-Cookie") != "" || got.header.Get("Access-Control-Allow-Origin") != "" || got.header.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("signed %v: %d with Set-Cookie %q, Access-Control-Allow-Origin %q", signedOK, got.status,
				got.header.Get("Set-Cookie"), got.header.Get("Access-Control-Allow-Origin"))
		}
	}
}

// TestFailedAuthenticationsAreLimited: wrong signatures are counted per
// address and per key id, and past either limit a request is refused
// before its credential is looked up, well signed or not, but for one
// from an address the key id authenticated from; requests that
// authenticate count for neither.
func TestFailedAuthenticationsAreLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cred, other := e.credential(models.EnvSandbox), e.credential(models.EnvSandbox)
	const path = "/api/partner/v1/availability?domain=example.com"
	from := func(address string, s *signed) answer {
		r := e.request(s)
		r.Header.Set("X-Forwarded-For", address)
		return e.send(r)
	}
	wrong := func() *signed {
		s := e.sign(cred, "GET", path, nil)
		s.secret = other.Secret
		return s
	}
	for i := range partner.FailuresPerAddress.Limit + 10 {
		if got := from("198.51.100.1", e.sign(cred, "GET", path, nil)); got.status != 200 {
			t.Fatalf("well-signed request %d = %d %s, want 200: successes count for nothing", i+1, got.status, got.body)
		}
	}
	for i := range partner.FailuresPerAddress.Limit {
		if got := from("203.0.113.7", wrong()); got.status != 401 {
			t.Fatalf("wrong signature %d = %d %s, want 401", i+1, got.status, got.body)
		}
	}
	got := from("203.0.113.7", e.sign(cred, "GET", path, nil))
	if code, _ := typedCode(t, got); got.status != http.StatusTooManyRequests || code != "rate_limited" || got.header.Get("Retry-After") == "" {
		t.Errorf("a request from an address past its failures = %d %s Retry-After %q, want 429 rate_limited with Retry-After",
			got.status, code, got.header.Get("Retry-After"))
	}
	if got := from("198.51.100.2", e.sign(cred, "GET", path, nil)); got.status != 200 {
		t.Errorf("the credential from another address = %d %s, want 200: addresses count apart", got.status, got.body)
	}

	// Failures of one key id from many addresses.
	limiter := ratelimit.New(e.redis.Client, e.clock)
	for range partner.FailuresPerKey.Limit {
		if _, err := limiter.Allow(context.Background(), partner.FailuresPerKey, cred.KeyID); err != nil {
			t.Fatal(err)
		}
	}
	if got := from("192.0.2.50", e.sign(cred, "GET", path, nil)); got.status != http.StatusTooManyRequests {
		t.Errorf("a key id past its failures, from a fresh address = %d %s, want 429", got.status, got.body)
	}
	if got := from("192.0.2.50", e.sign(other, "GET", path, nil)); got.status != 200 {
		t.Errorf("another key id from that address = %d %s, want 200", got.status, got.body)
	}
	// The partner's own server, which authenticated with the key before,
	// is not locked out by them; its signatures are still checked.
	if got := from("198.51.100.1", e.sign(cred, "GET", path, nil)); got.status != 200 {
		t.Errorf("the key id past its failures, from an address it authenticated from = %d %s, want 200", got.status, got.body)
	}
	if got := from("198.51.100.1", wrong()); got.status != 401 {
		t.Errorf("a wrong signature from that address = %d %s, want 401", got.status, got.body)
	}
	if got := from("192.0.2.50", e.sign(cred, "GET", path, nil)); got.status != http.StatusTooManyRequests {
		t.Errorf("the key id past its failures, from an address another key id authenticated from = %d %s, want 429", got.status, got.body)
	}
	// That address's own limit still holds.
	for i := range partner.FailuresPerAddress.Limit - 1 {
		if got := from("198.51.100.1", wrong()); got.status != 401 {
			t.Fatalf("wrong signature %d more from the known address = %d %s, want 401", i+1, got.status, got.body)
		}
	}
	if got := from("198.51.100.1", e.sign(cred, "GET", path, nil)); got.status != http.StatusTooManyRequests {
		t.Errorf("a known address past its own failures = %d %s, want 429", got.status, got.body)
	}

	// A key id of no credential's shape counts against its address alone,
	// not as a counter of its own, as long as the header, in Redis.
	junk := e.sign(cred, "GET", path, nil)
	junk.keyID = "pk_test_" + strings.Repeat("x", 4096)
	if got := from("192.0.2.60", junk); got.status != 401 {
		t.Errorf("a key id of no credential's shape = %d %s, want 401", got.status, got.body)
	}
	if keys := e.redis.Keys(t, "*partner-failures-key*xxxx*"); len(keys) != 0 {
		t.Errorf("the long key id has a failure counter: %d keys", len(keys))
	}
	if keys := e.redis.Keys(t, "*partner-failures-address*192.0.2.60*"); len(keys) == 0 {
		t.Error("the failure was not counted against its address")
	}
}
