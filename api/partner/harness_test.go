package partner_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/domaind/domaind/api"
	"github.com/domaind/domaind/api/openapi/openapitest"
	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/hmacsig"
	"github.com/domaind/domaind/internal/metrics"
	"github.com/domaind/domaind/internal/outbox"
	partners "github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/internal/platform"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/registry/sandbox"
	"github.com/domaind/domaind/internal/services"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/partnerclient"
	"github.com/domaind/domaind/worker"
)

// receiverAddr is the loopback address webhook receivers listen on in
// these tests, the one DOMAIND_FETCH_ALLOW_CIDRS lets through.
const receiverAddr = "127.0.0.2"

// testSecretKey is the tests' DOMAIND_SECRET_KEY.
var testSecretKey = []byte("partner-test-secret-key-0123456789")

// env is the whole service (api.New, so the engine's middleware too) on
// its own database and Redis, served over HTTP, with a clock the test
// holds still: signing skew is tested to the second.
type env struct {
	t        testing.TB
	db       *gorm.DB
	where    string // the database's URL, or the SQLite file's path
	redis    *platformtest.Redis
	outbox   *outbox.Outbox
	partners *partners.Service
	svc      *services.Set
	url      string
	now      time.Time
	// realTime makes the service's clock the real one (benchmarks that
	// compare its times with arrivals).
	realTime bool
}

func newEnv(t testing.TB) *env {
	t.Helper()
	db, where := modelstest.NewDBWithURL(t)
	e := &env{t: t, db: db, where: where, redis: platformtest.NewRedis(t), now: time.Now().UTC().Truncate(time.Second)}
	base, _ := url.Parse("http://api.test")
	cfg := &config.Config{BaseURL: base, OpsUser: "ops", OpsPassword: "ops-secret", SecretKey: testSecretKey,
		SearchTLDs: strings.Split(config.DefaultSearchTLDs, ","), FetchAllowCIDRs: []netip.Prefix{netip.MustParsePrefix(receiverAddr + "/32")},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}} // tests name their client by X-Forwarded-For
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e.outbox = outbox.New(e.db, e.redis.Client, log)
	t.Cleanup(func() { e.outbox.Close() })
	p := &platform.Platform{DB: e.db, Redis: e.redis.Client}
	set := services.New(services.Deps{Config: cfg, DB: e.db, Redis: e.redis.Client, Outbox: e.outbox, Log: log, Now: e.clock,
		Registry: sandbox.New(e.db, 0), Resources: api.Resources(cfg)})
	t.Cleanup(set.Close)
	e.svc = set
	srv := api.New(api.Deps{Config: cfg, Services: set, Redis: e.redis.Client, Outbox: e.outbox, Metrics: metrics.New(), Log: log,
		Check: p.Check, Now: e.clock})
	ts := httptest.NewServer(checked(t, srv))
	t.Cleanup(ts.Close)
	e.url = ts.URL
	e.partners = partners.New(e.db, testSecretKey, e.clock)
	return e
}

func (e *env) clock() time.Time {
	if e.realTime {
		return time.Now().UTC()
	}
	return e.now
}

// checked serves h, checking every exchange against the OpenAPI document
// before the answer leaves. Benchmarks are not checked, so that their
// figures measure the service alone.
func checked(t testing.TB, h http.Handler) http.Handler {
	if _, bench := t.(*testing.B); bench {
		return h
	}
	c, err := openapitest.Default()
	if err != nil {
		t.Fatalf("OpenAPI checker: %v", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		sent := r.Clone(r.Context())
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for _, p := range c.Check(openapitest.Exchange{Request: sent, RequestBody: body, Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}) {
			t.Errorf("OpenAPI: %s", p)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// credential makes an approved partner with a credential of environment
// and scopes (every scope when none are named).
func (e *env) credential(environment string, scopes ...string) partners.Issued {
	e.t.Helper()
	ctx := context.Background()
	p, err := e.partners.Create(ctx, "Partner "+uuid.NewString()[:8], "ops@partner.test")
	if err == nil {
		_, err = e.partners.Approve(ctx, p.ID)
	}
	if len(scopes) == 0 {
		scopes = partners.AllScopes
	}
	var c partners.Issued
	if err == nil {
		c, err = e.partners.IssueCredential(ctx, p.ID, environment, scopes)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// partnerOf is the partner id of a credential.
func (e *env) partnerOf(c partners.Issued) string {
	e.t.Helper()
	got, err := e.partners.Authenticate(context.Background(), c.KeyID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got.PartnerID
}

// client is the partners' Go client for c, on the test's clock shifted by
// skew, making one attempt per call.
func (e *env) client(c partners.Issued, skew time.Duration) *partnerclient.Client {
	return partnerclient.New(e.url, c.KeyID, c.Secret,
		partnerclient.WithClock(func() time.Time { return e.now.Add(skew) }),
		partnerclient.WithRetryPolicy(partnerclient.RetryPolicy{MaxAttempts: 1}))
}

// signed is a request signed by hand, for the cases partnerclient will not
// make: target is the path and query as sent, signedTarget as signed.
type signed struct {
	method, target, signedTarget string
	body, signedBody             []byte
	keyID, secret                string
	timestamp, nonce             string
}

// sign fills what a correct signer would for c and the test's clock.
func (e *env) sign(c partners.Issued, method, target string, body []byte) *signed {
	return &signed{method: method, target: target, signedTarget: target, body: body, signedBody: body,
		keyID: c.KeyID, secret: c.Secret, timestamp: strconv.FormatInt(e.now.Unix(), 10), nonce: uuid.NewString()}
}

// request builds the HTTP request of s.
func (e *env) request(s *signed) *http.Request {
	e.t.Helper()
	u, err := url.Parse(s.signedTarget)
	if err != nil {
		e.t.Fatal(err)
	}
	query, err := hmacsig.CanonicalQuery(u.RawQuery)
	if err != nil {
		e.t.Fatal(err)
	}
	canonical := hmacsig.CanonicalString(s.method, u.EscapedPath(), query, s.timestamp, s.nonce, s.signedBody)
	r, err := http.NewRequest(s.method, e.url+s.target, bytes.NewReader(s.body))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range map[string]string{hmacsig.HeaderKeyID: s.keyID, hmacsig.HeaderTimestamp: s.timestamp,
		hmacsig.HeaderNonce: s.nonce, hmacsig.HeaderSignature: hmacsig.Sign([]byte(s.secret), canonical)} {
		if v != "" {
			r.Header.Set(k, v)
		}
	}
	if len(s.body) > 0 {
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

// answer is a response read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (e *env) send(r *http.Request) answer {
	e.t.Helper()
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return answer{status: res.StatusCode, header: res.Header, body: b}
}

// wantAPIError checks that err is an *APIError with status and code.
func wantAPIError(t *testing.T, what string, err error, status int, code string) *partnerclient.APIError {
	t.Helper()
	ae, ok := err.(*partnerclient.APIError)
	if !ok {
		t.Fatalf("%s: err = %v, want an API error %d %s", what, err, status, code)
	}
	if ae.Status != status || ae.Code != code {
		t.Errorf("%s = %d %s (%s), want %d %s", what, ae.Status, ae.Code, ae.Message, status, code)
	}
	return ae
}

// addSandbox puts a domain in the sandbox inventory at binCents.
func (e *env) addSandbox(domain string, binCents int64) {
	e.t.Helper()
	l := models.SandboxListing{ID: models.NewID(), Domain: domain, TLD: domain[strings.LastIndexByte(domain, '.')+1:],
		BINCents: &binCents, Currency: "USD", CreatedAt: e.now.Add(-time.Hour)}
	if err := e.db.Create(&l).Error; err != nil {
		e.t.Fatal(err)
	}
}

// addLive lists a domain on the live marketplace at binCents.
func (e *env) addLive(domain string, binCents int64) {
	e.t.Helper()
	l := models.Listing{ID: models.NewID(), Domain: domain, TLD: domain[strings.LastIndexByte(domain, '.')+1:],
		BINCents: &binCents, Currency: "USD", Approved: true, MarketplaceVisible: true, CreatedAt: e.now.Add(-time.Hour)}
	if err := e.db.Create(&l).Error; err != nil {
		e.t.Fatal(err)
	}
}

// parallel runs n copies of f at once and waits for them.
// startWorker runs a worker on the env's database and Redis until the test
// ends, delivering webhooks to the tests' receivers. On Postgres it runs
// on a connection pool of its own, as the worker process of a deployment
// does; the embedded SQLite has one writer, shared by every role of its
// one process.
func (e *env) startWorker() {
	e.t.Helper()
	wdb := e.db
	if strings.HasPrefix(e.where, "postgres") {
		wdb = modelstest.Reopen(e.t, e.where)
	}
	log := slog.New(slog.DiscardHandler)
	allow := []netip.Prefix{netip.MustParsePrefix(receiverAddr + "/32")}
	wob := outbox.New(wdb, e.redis.Client, log)
	w := worker.New(worker.Deps{DB: wdb, Outbox: wob, Metrics: metrics.New(), Log: log,
		RedisOpt: e.redis.Opt, Webhooks: webhook.New(wdb, testSecretKey, allow, time.Now)})
	if err := w.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		w.Shutdown()
		wob.Close()
	})
}

func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); f(i) }()
	}
	wg.Wait()
}
