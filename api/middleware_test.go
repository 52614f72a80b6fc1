package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/testtool"
)

func TestRateLimitHeadersAnd429(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.srv.engine.GET("/test/limited", env.srv.limit(ratelimit.PerMinute("test", 60)), func(c *gin.Context) { c.String(200, "ok") })
	for i := 1; i <= 60; i++ {
		w := env.request("GET", "/test/limited", "")
		if w.Code != 200 {
			t.Fatalf("request %d = %d, want 200", i, w.Code)
		}
		if exactHeader(w, "RateLimit-Limit") != "60" || exactHeader(w, "RateLimit-Remaining") != strconv.Itoa(60-i) || exactHeader(w, "RateLimit-Policy") != "60;w=60" || exactHeader(w, "RateLimit-Reset") == "" {
			t.Fatalf("request %d headers = %v", i, w.Header())
		}
	}
	w := env.request("GET", "/test/limited", "")
	if w.Code != 429 {
		t.Fatalf("61st = %d, want 429", w.Code)
	}
	if code, _ := typedError(t, w); code != "rate_limited" {
		t.Errorf("code = %q, want rate_limited", code)
	}
	if ra := w.Header().Get("Retry-After"); ra != "60" { // the first request of the window leaves it then
		t.Errorf("Retry-After = %q, want 60", ra)
	}
	if exactHeader(w, "RateLimit-Remaining") != "0" {
		t.Errorf("RateLimit-Remaining = %q on a 429", exactHeader(w, "RateLimit-Remaining"))
	}
	// Another client is not affected.
	r := httptest.NewRequest("GET", "/test/limited", nil)
	r.RemoteAddr = "192.0.2.99:5"
	if w := env.do(r); w.Code != 200 {
		t.Errorf("other client = %d, want 200", w.Code)
	}
}

func TestQuotaExceededAndRefund(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.srv.engine.POST("/test/quota", env.srv.limit(ratelimit.PerDay("testq", 2)), func(c *gin.Context) {
		if c.Query("bad") != "" {
			c.JSON(400, gin.H{"error": gin.H{"code": "validation_error", "message": "bad"}})
			return
		}
		var body struct{}
		if err := httpjson.DecodeJSON(c, &body, true); err != nil {
			env.srv.resp.Error(c, err)
			return
		}
		r, _ := c.Get(quotaCtxKey)
		c.JSON(201, gin.H{"used": r.(ratelimit.Result).Used})
	})
	if w := env.request("POST", "/test/quota?bad=1", ""); w.Code != 400 {
		t.Fatalf("bad request = %d", w.Code)
	}
	if w := env.request("POST", "/test/quota", `{"pad":"`+strings.Repeat("x", DefaultBodyLimit)+`"}`); w.Code != 413 {
		t.Fatalf("oversized request = %d, want 413", w.Code)
	}
	for i := 1; i <= 2; i++ {
		w := env.request("POST", "/test/quota", "")
		if w.Code != 201 || !strings.Contains(w.Body.String(), `"used":`+strconv.Itoa(i)) {
			t.Fatalf("request %d = %d %s; the 400 and the 413 must not have used quota", i, w.Code, w.Body)
		}
	}
	w := env.request("POST", "/test/quota", "")
	if w.Code != 429 {
		t.Fatalf("3rd = %d, want 429", w.Code)
	}
	if code, _ := typedError(t, w); code != "quota_exceeded" {
		t.Errorf("code = %q, want quota_exceeded", code)
	}
	// env.now is 12:00 UTC: twelve hours to midnight.
	if got := w.Header().Get("Retry-After"); got != "43200" {
		t.Errorf("Retry-After = %q, want 43200", got)
	}
	if got := exactHeader(w, "RateLimit-Policy"); got != "2;w=86400" {
		t.Errorf("RateLimit-Policy = %q", got)
	}
	env.now = env.now.Add(12 * time.Hour)
	if w := env.request("POST", "/test/quota", ""); w.Code != 201 {
		t.Errorf("after midnight = %d, want 201", w.Code)
	}
}

// A WHOIS unit is given back when the lookup failed on our side, but only
// so often: each failure sent queries to registries all the same.
func TestWhoisRefundsAreBudgeted(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.srv.engine.POST("/test/failing-lookup", env.srv.limit(whoisQuota), env.srv.resp.Handle(func(c *gin.Context) error {
		refundQuota(c)
		return fault.New(fault.LookupFailed, "both failed")
	}))
	budget := refundBudgets[whoisQuota.Name].Limit
	for i := range budget + whoisQuota.Limit {
		if w := env.request("POST", "/test/failing-lookup", ""); w.Code != 404 {
			t.Fatalf("failed lookup %d = %d, want 404 (refunds %d, then the quota's %d)", i+1, w.Code, budget, whoisQuota.Limit)
		}
	}
	wantError(t, "a failed lookup past the refund budget and the quota", env.request("POST", "/test/failing-lookup", ""), 429, "quota_exceeded")
}

func TestRedisDownIs503(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.redis.Server(t) // the test takes Redis away
	env.srv.engine.GET("/test/limited", env.srv.limit(ratelimit.PerMinute("test", 60)), func(c *gin.Context) { c.String(200, "ok") })
	env.proxy.Stop()
	w := env.request("GET", "/test/limited", "")
	if w.Code != 503 {
		t.Fatalf("status = %d %s, want 503", w.Code, w.Body)
	}
	if code, _ := typedError(t, w); code != "unavailable" {
		t.Errorf("code = %q", code)
	}
	env.proxy.Start(t)
	if w := env.request("GET", "/test/limited", ""); w.Code != 200 {
		t.Errorf("after Redis is back = %d, want 200", w.Code)
	}
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	var runs atomic.Int32
	release := make(chan struct{})
	env.srv.engine.POST("/test/idem", env.srv.idempotent, func(c *gin.Context) {
		n := runs.Add(1)
		if c.Query("wait") != "" {
			<-release
		}
		if c.Query("fail") != "" {
			c.JSON(500, gin.H{"error": gin.H{"code": "internal_error", "message": "x"}})
			return
		}
		c.Header("Location", "/things/"+strconv.Itoa(int(n)))
		c.JSON(201, gin.H{"run": n})
	})
	first := env.request("POST", "/test/idem", `{"a":1}`, "Idempotency-Key", "key-1")
	if first.Code != 201 || first.Header().Get(HeaderIdempotentReplayed) != "" {
		t.Fatalf("first = %d %v", first.Code, first.Header())
	}
	replay := env.request("POST", "/test/idem", `{"a":1}`, "Idempotency-Key", "key-1")
	if replay.Code != 201 || replay.Body.String() != first.Body.String() || replay.Header().Get("Location") != "/things/1" {
		t.Errorf("replay = %d %s %v; want the first response", replay.Code, replay.Body, replay.Header())
	}
	if replay.Header().Get(HeaderIdempotentReplayed) != "true" {
		t.Errorf("replay lacks Idempotent-Replayed: true")
	}
	if runs.Load() != 1 {
		t.Errorf("handler ran %d times, want 1", runs.Load())
	}

	w := env.request("POST", "/test/idem", `{"a":2}`, "Idempotency-Key", "key-1")
	if w.Code != 409 {
		t.Errorf("same key, other body = %d, want 409", w.Code)
	} else if code, _ := typedError(t, w); code != "conflict" {
		t.Errorf("code = %q, want conflict", code)
	}

	// Another client's identical key is its own.
	r := httptest.NewRequest("POST", "/test/idem", strings.NewReader(`{"a":2}`))
	r.RemoteAddr = "198.51.100.4:9"
	r.Header.Set("Idempotency-Key", "key-1")
	if w := env.do(r); w.Code != 201 {
		t.Errorf("other client's key = %d, want 201", w.Code)
	}

	// A second request while the first runs: 409, and the handler runs once.
	var wg sync.WaitGroup
	var inflight *httptest.ResponseRecorder
	before := runs.Load()
	wg.Go(func() { inflight = env.request("POST", "/test/idem?wait=1", `{}`, "Idempotency-Key", "key-2") })
	testtool.WaitFor(t, "the first request runs", func() bool { return runs.Load() != before })
	w = env.request("POST", "/test/idem?wait=1", `{}`, "Idempotency-Key", "key-2")
	close(release)
	wg.Wait()
	if w.Code != 409 || inflight.Code != 201 {
		t.Errorf("concurrent = %d, first = %d; want 409 and 201", w.Code, inflight.Code)
	}
	if got := runs.Load() - before; got != 1 {
		t.Errorf("handler ran %d times for two concurrent requests, want 1", got)
	}

	// A 5xx is not stored: the retry runs again.
	before = runs.Load()
	env.request("POST", "/test/idem?fail=1", `{}`, "Idempotency-Key", "key-3")
	env.request("POST", "/test/idem?fail=1", `{}`, "Idempotency-Key", "key-3")
	if got := runs.Load() - before; got != 2 {
		t.Errorf("5xx retried: handler ran %d times, want 2", got)
	}

	if w := env.request("POST", "/test/idem", `{}`, "Idempotency-Key", strings.Repeat("k", 256)); w.Code != 400 {
		t.Errorf("oversized key = %d, want 400", w.Code)
	}
}

// A path, query or form body that is not UTF-8 once decoded, or holds a
// NUL, is a 400 in the route's error shape, before any handler looks it
// up (Postgres refuses such bytes: the lookups answered 500); a form that
// is UTF-8 still reaches its handler whole.
func TestTextThatIsNotUTF8IsRefused(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	form := func(path, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return env.do(r)
	}
	for name, w := range map[string]*httptest.ResponseRecorder{
		"query":     env.request("GET", "/api/domains?folder=%FF", ""),
		"path":      env.request("GET", "/api/tlds/%FF/metadata", ""),
		"page":      env.request("GET", "/oauth/authorize?response_type=code&client_id=%FF", "", "Accept", "text/html"),
		"form":      form("/api/oauth/token", "grant_type=refresh_token&refresh_token=x&client_id=%FF"),
		"form v2":   form("/api/oauth/token", "grant_type=refresh_token&refresh_token=x&client_id=oc_1&%FF=1"),
		"form v3":   form("/api/oauth/token", "grant_type=refresh_token&refresh_token=x&client_id=%FF&z=%"), // a malformed pair after it
		"query NUL": env.request("GET", "/api/domains?folder=a%00", ""),
		"path NUL":  env.request("GET", "/api/tlds/c%00m/metadata", ""),
		"page NUL":  env.request("GET", "/oauth/authorize?response_type=code&client_id=oc_%00&redirect_uri=https://a.example/cb", "", "Accept", "text/html"),
		"form NUL":  form("/api/oauth/token", "grant_type=refresh_token&refresh_token=x&client_id=oc_%00"),
		"multipart": func() *httptest.ResponseRecorder {
			r := httptest.NewRequest("POST", "/api/oauth/token", strings.NewReader(
				"--b\r\nContent-Disposition: form-data; name=\"grant_type\"\r\n\r\nrefresh_token\r\n"+
					"--b\r\nContent-Disposition: form-data; name=\"client_id\"\r\n\r\n\xff\r\n--b--\r\n"))
			r.Header.Set("Content-Type", "multipart/form-data; boundary=b")
			return env.do(r)
		}(),
	} {
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "UTF-8") {
			t.Errorf("%s = %d %s, want 400 saying UTF-8", name, w.Code, w.Body)
		}
	}
	// The older endpoints' 400 is in their legacy shape, this one too.
	for name, w := range map[string]*httptest.ResponseRecorder{
		"pricing NUL":     env.request("GET", "/api/pricing/tld?tld=co%00m", ""),
		"availability FF": env.request("GET", "/api/v1/domains/available?domain=%FF", ""),
	} {
		var legacy struct{ Error string }
		if w.Code != http.StatusBadRequest || json.Unmarshal(w.Body.Bytes(), &legacy) != nil || !strings.Contains(legacy.Error, "UTF-8") {
			t.Errorf("%s = %d %s, want 400 in the legacy shape saying UTF-8", name, w.Code, w.Body)
		}
	}
	if w := form("/api/oauth/token", "grant_type=refresh_token&refresh_token=x&client_id=oc_000000000000000000000000"); w.Code != http.StatusUnauthorized ||
		!strings.Contains(w.Body.String(), "invalid_client") {
		t.Errorf("a UTF-8 form = %d %s, want its handler's 401 invalid_client", w.Code, w.Body)
	}
	basic := httptest.NewRequest("POST", "/api/oauth/token", strings.NewReader("grant_type=refresh_token&refresh_token=x"))
	basic.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	basic.SetBasicAuth("\xff", "secret")
	if w := env.do(basic); w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "invalid_client") {
		t.Errorf("a Basic client id that is not UTF-8 = %d %s, want 401 invalid_client", w.Code, w.Body)
	}
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.srv.engine.POST("/test/body", env.srv.resp.Handle(func(c *gin.Context) error {
		var v map[string]any
		return httpjson.DecodeJSON(c, &v, false)
	}))
	big := `{"x":"` + strings.Repeat("a", DefaultBodyLimit) + `"}`
	w := env.request("POST", "/test/body", big)
	if w.Code != 413 {
		t.Fatalf("declared oversize = %d, want 413", w.Code)
	}
	if code, _ := typedError(t, w); code != "payload_too_large" {
		t.Errorf("code = %q", code)
	}
	r := httptest.NewRequest("POST", "/test/body", strings.NewReader(big))
	r.ContentLength = -1 // chunked: only reading finds out
	r.Header.Set("Content-Type", "application/json")
	if w := env.do(r); w.Code != 413 {
		t.Errorf("chunked oversize = %d, want 413", w.Code)
	}
	for body, want := range map[string]string{
		`{"x":`:      "bad_request",
		``:           "bad_request",
		`{} {}`:      "bad_request",
		`[1,2]`:      "bad_request", // the body as a whole is not the object asked for
		`{"x":1} xx`: "bad_request",
	} {
		w := env.request("POST", "/test/body", body)
		if w.Code != 400 {
			t.Errorf("body %q = %d, want 400", body, w.Code)
			continue
		}
		if code, _ := typedError(t, w); code != want {
			t.Errorf("body %q code = %q, want %q", body, code, want)
		}
	}
}

func TestLegacyErrorShape(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.srv.engine.GET("/test/legacy", httpjson.Legacy, env.srv.resp.Handle(func(c *gin.Context) error {
		return fault.New(fault.BadRequest, "tld is required")
	}))
	w := env.request("GET", "/test/legacy", "")
	if w.Code != 400 || w.Body.String() != `{"error":"tld is required"}` {
		t.Errorf("legacy error = %d %s", w.Code, w.Body)
	}
}

func TestUnknownErrorsHideInternals(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.srv.engine.GET("/test/boom", env.srv.resp.Handle(func(c *gin.Context) error {
		return errSecret
	}))
	env.srv.engine.GET("/test/panic", func(c *gin.Context) { panic("secret detail") })
	for _, path := range []string{"/test/boom", "/test/panic"} {
		w := env.request("GET", path, "")
		if w.Code != 500 || strings.Contains(w.Body.String(), "secret") {
			t.Errorf("%s = %d %s; want 500 without internals", path, w.Code, w.Body)
		}
		if code, _ := typedError(t, w); code != "internal_error" {
			t.Errorf("%s code = %q", path, code)
		}
	}
}

// A handler that stops because its client left is not a server failure:
// no 500, no error in the log.
func TestClientThatLeftIsNotAFailure(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	var logged bytes.Buffer
	env.deps.Log = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))
	env.srv = New(env.deps)
	env.srv.engine.GET("/test/left", env.srv.resp.Handle(func(c *gin.Context) error {
		<-c.Request.Context().Done()
		return fmt.Errorf("wait for lookup: %w", c.Request.Context().Err())
	}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := env.do(httptest.NewRequest("GET", "/test/left", nil).WithContext(ctx))
	if w.Code != httpjson.StatusClientClosed || w.Body.Len() != 0 {
		t.Errorf("left client = %d %q, want %d and no body", w.Code, w.Body, httpjson.StatusClientClosed)
	}
	if strings.Contains(logged.String(), "level=ERROR") {
		t.Errorf("a client leaving was logged as an error:\n%s", logged.String())
	}
}

type secretError struct{}

func (secretError) Error() string { return "secret: database password is hunter2" }

var errSecret error = secretError{}

func TestClientIdentity(t *testing.T) {
	t.Parallel()
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	tests := []struct {
		name, remote, xff, want string
	}{
		{"socket peer", "203.0.113.5:443", "", "203.0.113.5"},
		{"forwarded header from an untrusted peer is ignored", "203.0.113.5:443", "198.51.100.1", "203.0.113.5"},
		{"trusted proxy", "10.1.2.3:80", "198.51.100.1", "198.51.100.1"},
		{"chain of trusted proxies", "10.1.2.3:80", "198.51.100.1, 10.9.9.9", "198.51.100.1"},
		{"spoofed left entries are not believed", "10.1.2.3:80", "1.1.1.1, 198.51.100.1", "198.51.100.1"},
		{"garbage in the header stops the walk", "10.1.2.3:80", "nonsense", "10.1.2.3"},
		{"ipv6 grouped by /64", "[2001:db8:1:2:aaaa::1]:443", "", "2001:db8:1:2::/64"},
		{"ipv4-mapped ipv6", "[::ffff:203.0.113.9]:443", "", "203.0.113.9"},
	}
	env := newTestEnv(t, func(c *config.Config) { c.TrustedProxies = trusted })
	env.srv.engine.GET("/test/who", func(c *gin.Context) { c.String(200, httpjson.Client(c)) })
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/test/who", nil)
			r.RemoteAddr = tc.remote
			if tc.xff != "" {
				r.Header.Set("X-Forwarded-For", tc.xff)
			}
			if got := env.do(r).Body.String(); got != tc.want {
				t.Errorf("client = %q, want %q", got, tc.want)
			}
		})
	}
}

// exactHeader reads a header by its exact spelling, which the spec gives
// for the RateLimit-* headers.
func exactHeader(w *httptest.ResponseRecorder, name string) string {
	if v := w.Header()[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// A validation error names the input at fault in error.field, as the
// OpenAPI document's BadRequest says: the body's field, the path's
// segment.
func TestValidationErrorsNameTheirField(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for _, tc := range []struct {
		method, path, body, field string
	}{
		{"POST", "/api/domain/search", `{}`, "q"},
		{"POST", "/api/domain/search", `{"q":"not a name!"}`, "q"},
		{"POST", "/api/tools/whois", `{}`, "domain"},
		{"POST", "/api/tools/whois", `{"domain":"-bad-.com"}`, "domain"},
		{"GET", "/api/tlds/c_m/metadata", "", "tld"},
		{"GET", "/api/tools/dns-lookup/status/not-a-job", "", "jobId"},
	} {
		w := env.request(tc.method, tc.path, tc.body)
		var body struct {
			Error struct{ Code, Field string } `json:"error"`
		}
		if w.Code != http.StatusBadRequest || json.Unmarshal(w.Body.Bytes(), &body) != nil ||
			body.Error.Code != "validation_error" || body.Error.Field != tc.field {
			t.Errorf("%s %s %s = %d %s, want 400 validation_error naming %s", tc.method, tc.path, tc.body, w.Code, w.Body, tc.field)
		}
	}
}

// A multipart form's files are not written to temporary files for the
// UTF-8 check, even for a request refused at the next step: an anonymous
// import of 3 MiB (the route takes 4) left its file in the temporary
// directory.
func TestTheUTF8CheckLeavesNoTemporaryFiles(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	temps := func() map[string]bool {
		names, _ := filepath.Glob(filepath.Join(os.TempDir(), "multipart-*"))
		set := map[string]bool{}
		for _, n := range names {
			set[n] = true
		}
		return set
	}
	before := temps()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", "names.csv")
	part.Write(bytes.Repeat([]byte("a"), 3<<20))
	mw.Close()
	r := httptest.NewRequest("POST", "/ops/listings/import", &body)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	if w := env.do(r); w.Code != http.StatusUnauthorized {
		t.Fatalf("an anonymous import = %d, want 401", w.Code)
	}
	// Another test's request may hold a file of its own for a moment.
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left = left[:0]
		for n := range temps() {
			if !before[n] {
				left = append(left, n)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("temporary files left after the request: %v", left)
	}
}
