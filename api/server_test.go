package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/dnslookup"
	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/internal/metrics"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/password"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/internal/platform"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/registry/sandbox"
	"github.com/domaind/domaind/internal/services"
	"github.com/domaind/domaind/internal/tools"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// testEnv is a Server on an isolated database and Redis.
type testEnv struct {
	tb    testing.TB
	srv   *Server
	db    *gorm.DB
	redis *platformtest.Redis
	// proxy sits between the server and Redis, so tests can take Redis away.
	proxy *platformtest.Proxy
	now   time.Time
	deps  Deps
	// registry and payments are the services' registry provider and card
	// processors (nil: the configuration's).
	registry registry.Provider
	payments map[string]payment.Provider
}

func newTestEnv(t testing.TB, mutate ...func(*config.Config)) *testEnv {
	t.Helper()
	return newTestEnvOn(t, modelstest.NewDB(t), mutate...)
}

// failureLog is a logger of warnings and errors that the test shows if it
// fails (a 500 says only "internal error"; the log says why).
func failureLog(t testing.TB) *slog.Logger {
	var mu sync.Mutex
	var b strings.Builder
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if t.Failed() && b.Len() > 0 {
			t.Logf("service log:\n%s", b.String())
		}
	})
	w := writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return b.Write(p)
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// newTestEnvOn is newTestEnv on a given database.
func newTestEnvOn(t testing.TB, db *gorm.DB, mutate ...func(*config.Config)) *testEnv {
	t.Helper()
	env := &testEnv{tb: t, db: db, redis: platformtest.NewRedis(t), now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	rc := env.redis.Client
	if opt, ok := env.redis.Opt.(asynq.RedisClientOpt); ok { // one server: a proxy lets tests take it away
		env.proxy = platformtest.NewProxy(t, opt.Addr)
		opt.Addr = env.proxy.Addr
		opt.DialTimeout, opt.ReadTimeout = 200*time.Millisecond, 200*time.Millisecond
		rc = opt.MakeRedisClient().(redis.UniversalClient)
		t.Cleanup(func() { rc.Close() })
	}
	base, _ := url.Parse("http://api.test")
	cfg := &config.Config{BaseURL: base, OpsUser: "ops", OpsPassword: "ops-secret",
		SecretKey: []byte("test-secret-key-0123456789abcdef"), SearchTLDs: strings.Split(config.DefaultSearchTLDs, ","),
		FetchAllowCIDRs: []netip.Prefix{netip.MustParsePrefix(testSiteAddr + "/32")}} // webhook receivers
	for _, m := range mutate {
		m(cfg)
	}
	log := failureLog(t)
	p := &platform.Platform{DB: env.db, Redis: rc}
	ob := outbox.New(env.db, rc, log)
	t.Cleanup(func() { ob.Close() })
	env.deps = Deps{
		Config: cfg, Redis: rc, Metrics: metrics.New(), Log: log, Outbox: ob, Tools: testTools(env.db),
		Check: p.Check, Now: func() time.Time { return env.now },
	}
	env.registry = sandbox.New(env.db, 0)
	env.rebuild()
	t.Cleanup(func() { env.deps.Services.Close() })
	return env
}

// rebuild builds env's services and server again from what env holds
// now, closing the services it had.
func (env *testEnv) rebuild() {
	if env.deps.Services != nil {
		env.deps.Services.Close()
	}
	d := env.deps
	env.deps.Services = services.New(services.Deps{Config: d.Config, DB: env.db, Redis: d.Redis, Outbox: d.Outbox, Log: d.Log,
		Now: d.Now, Registry: env.registry, Tools: d.Tools, Payments: env.payments, Resources: Resources(d.Config),
		Passwords: password.Params{MemoryKiB: 64, Time: 1, Threads: 1}, // cheap: the tests sign in often
	})
	env.srv = New(env.deps)
}

// testSiteAddr is where tests serve the sites the tools fetch: a loopback
// address of its own, so that 127.0.0.1 stays refused.
const testSiteAddr = "127.0.0.2"

// testNames is the DNS of the tools' tests: names under public suffixes
// (as the tools take), one of which resolves to a private address.
var testNames = staticResolver{
	"site.example.net":     {netip.MustParseAddr(testSiteAddr)},
	"internal.example.com": {netip.MustParseAddr("10.0.0.7")},
}

type staticResolver map[string][]netip.Addr

func (r staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[strings.TrimSuffix(host, ".")]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// testTools are the free tools as tests see them: fetching only from
// testSiteAddr, resolving testNames, and with no DNS server to ask.
func testTools(db *gorm.DB) *tools.Registry {
	return tools.New(tools.Deps{
		Fetch:    fetch.New(fetch.Options{Allow: []netip.Prefix{netip.MustParsePrefix(testSiteAddr + "/32")}, Resolver: testNames}),
		DNS:      &dnslookup.Resolver{Addr: "127.0.0.1:9", Timeout: 200 * time.Millisecond},
		Registry: sandbox.New(db, 0),
	})
}

// directRedis rebuilds the server on the test Redis without the proxy in
// between, for benchmarks that measure the real path.
func (env *testEnv) directRedis() {
	env.deps.Redis = env.redis.Client
	env.rebuild()
}

// withRegistry rebuilds the server on another registry provider.
func (env *testEnv) withRegistry(p registry.Provider) {
	env.registry = p
	env.rebuild()
}

// do sends a request through the engine (httptest requests come from
// 192.0.2.1) and checks the exchange against the OpenAPI document.
func (env *testEnv) do(r *http.Request) *httptest.ResponseRecorder {
	env.tb.Helper()
	sent, body := snapshot(env.tb, r)
	w := httptest.NewRecorder()
	env.srv.ServeHTTP(w, r)
	env.checkOpenAPI(sent, body, w.Code, w.Header(), w.Body.Bytes())
	return w
}

func (env *testEnv) request(method, path, body string, header ...string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	r := httptest.NewRequest(method, path, rd)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	return env.do(r)
}

// typedError decodes a typed error body, failing the test on another shape.
func typedError(t *testing.T, w *httptest.ResponseRecorder) (code, msg string) {
	t.Helper()
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error.Code == "" || body.Error.Message == "" {
		t.Fatalf("body %q is not a typed error (%v)", w.Body.String(), err)
	}
	return body.Error.Code, body.Error.Message
}

// wantError checks that w is a typed error with status and code.
func wantError(t *testing.T, what string, w *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if w.Code != status {
		t.Errorf("%s = %d %s, want %d", what, w.Code, w.Body, status)
		return
	}
	if got, _ := typedError(t, w); got != code {
		t.Errorf("%s code = %q, want %q", what, got, code)
	}
}

func TestUnknownRouteAndMethod(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	tests := []struct {
		name, method, path string
		wantStatus         int
		wantCode           string
		wantAllow          string
	}{
		{"unknown path", "GET", "/no/such/thing", 404, "not_found", ""},
		{"unknown api path", "POST", "/api/nothing", 404, "not_found", ""},
		{"wrong method", "DELETE", "/healthz", 405, "method_not_allowed", "GET, HEAD"}, // HEAD is answered wherever GET is
		{"GET on a POST route", "GET", "/api/domain/search", 405, "method_not_allowed", "POST, OPTIONS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := env.request(tc.method, tc.path, "")
			if w.Code != tc.wantStatus {
				t.Fatalf("status = %d, want %d", w.Code, tc.wantStatus)
			}
			if code, _ := typedError(t, w); code != tc.wantCode {
				t.Errorf("code = %q, want %q", code, tc.wantCode)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("content type = %q", ct)
			}
			if allow := w.Header().Get("Allow"); allow != tc.wantAllow {
				t.Errorf("Allow = %q, want %q", allow, tc.wantAllow)
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	w := env.request("GET", "/healthz", "")
	if id := w.Header().Get(HeaderRequestID); len(id) != 16 {
		t.Errorf("generated request id = %q, want 16 characters", id)
	}
	w = env.request("GET", "/healthz", "", HeaderRequestID, "client-chosen-1")
	if id := w.Header().Get(HeaderRequestID); id != "client-chosen-1" {
		t.Errorf("request id = %q, want the client's", id)
	}
	w = env.request("GET", "/healthz", "", HeaderRequestID, "has space")
	if id := w.Header().Get(HeaderRequestID); id == "has space" || id == "" {
		t.Errorf("request id = %q, want a fresh one for an unprintable client id", id)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	if w := env.request("GET", "/healthz", ""); w.Code != 200 || w.Body.String() != `{"status":"ok"}` {
		t.Errorf("healthz = %d %s", w.Code, w.Body)
	}
	env.request("GET", "/nope", "")
	w := env.request("GET", "/metrics", "")
	for _, want := range []string{
		`domaind_http_request_duration_seconds_count{method="GET",route="/healthz",status="2xx"} 1`,
		`domaind_http_request_duration_seconds_count{method="GET",route="unmatched",status="4xx"} 1`,
	} {
		if !bytes.Contains(w.Body.Bytes(), []byte(want)) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// In production /metrics is not public: it asks for DOMAIND_METRICS_TOKEN
// as a bearer token, and is off without one.
func TestMetricsAreNotPublicInProduction(t *testing.T) {
	t.Parallel()
	const token = "metrics-token-0123456789"
	production := func(c *config.Config) { c.DatabaseURL, c.RedisURL = "postgres://db/x", "redis://r:6379" }
	off := newTestEnv(t, production)
	wantError(t, "production /metrics without a token configured", off.request("GET", "/metrics", ""), 404, "not_found")

	on := newTestEnv(t, production, func(c *config.Config) { c.MetricsToken = token })
	for _, auth := range []string{"", "Bearer wrong-token-0123456789", "Basic " + token, token} {
		w := on.request("GET", "/metrics", "", "Authorization", auth)
		wantError(t, fmt.Sprintf("/metrics with Authorization %q", auth), w, 401, "unauthorized")
		if w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("401 without a challenge")
		}
	}
	if w := on.request("GET", "/metrics", "", "Authorization", "Bearer "+token); w.Code != 200 || !strings.Contains(w.Body.String(), "domaind_http_request_duration_seconds") {
		t.Errorf("/metrics with the token = %d", w.Code)
	}
}

func TestReadyzNamesTheMissingDependency(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.redis.Server(t) // the test takes Redis away
	if w := env.request("GET", "/readyz", ""); w.Code != 200 {
		t.Fatalf("readyz = %d %s, want 200", w.Code, w.Body)
	}
	env.proxy.Stop()
	w := env.request("GET", "/readyz", "")
	if w.Code != 503 {
		t.Fatalf("readyz with Redis down = %d, want 503", w.Code)
	}
	var body struct {
		Status string            `json:"status"`
		Checks map[string]string `json:"checks"`
	}
	json.Unmarshal(w.Body.Bytes(), &body)
	if body.Status != "unavailable" || body.Checks["redis"] != "unreachable" || body.Checks["database"] != "ok" {
		t.Errorf("readyz body = %s; want redis unreachable, database ok", w.Body)
	}
	env.proxy.Start(t)
	if w := env.request("GET", "/readyz", ""); w.Code != 200 {
		t.Errorf("readyz after Redis came back = %d %s, want 200", w.Code, w.Body)
	}
}

func TestPostgresDownIs503AndWritesNothing(t *testing.T) {
	t.Parallel()
	if os.Getenv("DOMAIND_TEST_DATABASE_URL") == "" {
		t.Skip("needs Postgres (DOMAIND_TEST_DATABASE_URL): the embedded SQLite is a file and cannot go away")
	}
	direct, dbURL := modelstest.NewDBWithURL(t)
	u, _ := url.Parse(dbURL)
	proxy := platformtest.NewProxy(t, u.Host)
	u.Host = proxy.Addr
	viaProxy, err := platform.OpenPostgres(u.String(), config.DefaultDatabaseMaxConns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := viaProxy.DB(); err == nil {
			sqlDB.Close()
		}
	})
	env := newTestEnvOn(t, viaProxy)

	proxy.Stop()
	w := opsRequest(env, "POST", "/api/ops/canaries", `{"steps":1}`)
	if w.Code != 503 {
		t.Fatalf("create with Postgres down = %d %s, want 503", w.Code, w.Body)
	}
	if code, _ := typedError(t, w); code != "unavailable" {
		t.Errorf("code = %q, want unavailable", code)
	}
	w = env.request("GET", "/readyz", "")
	if w.Code != 503 || !strings.Contains(w.Body.String(), `"database":"unreachable"`) || !strings.Contains(w.Body.String(), `"redis":"ok"`) {
		t.Errorf("readyz = %d %s, want database unreachable", w.Code, w.Body)
	}

	proxy.Start(t)
	var canaries, entries int64
	direct.Model(&models.Canary{}).Count(&canaries)
	direct.Model(&models.OutboxEntry{}).Count(&entries)
	if canaries != 0 || entries != 0 {
		t.Errorf("the failed request left %d canaries and %d outbox entries", canaries, entries)
	}
	if w := opsRequest(env, "POST", "/api/ops/canaries", `{"steps":1}`); w.Code != 202 {
		t.Errorf("create after Postgres came back = %d %s, want 202", w.Code, w.Body)
	}
}
