package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/metrics"
	"github.com/domaind/domaind/internal/rdap"
	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/internal/whois"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/worker"
)

// lookupWorld is the outside world of lookups: an RDAP server for .com
// answering the recorded google.com fixture for google.com and the
// benchmark's bench-* names (404 for other names) and a
// WHOIS service (IANA and .io's server) answering the recorded .io
// fixtures. Its resolver is what a worker uses.
type lookupWorld struct {
	resolver  *lookup.Resolver
	rdapCalls chan string
}

func newLookupWorld(t testing.TB) *lookupWorld {
	t.Helper()
	w := &lookupWorld{rdapCalls: make(chan string, 100)}
	google, err := os.ReadFile("../internal/rdap/testdata/verisign-com-google.com.json")
	if err != nil {
		t.Fatal(err)
	}
	// One TLS server plays Verisign and MarkMonitor (the registrar the
	// fixture's related link names); the client dials it for every host.
	rdapSrv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		select {
		case w.rdapCalls <- r.URL.Path:
		default:
		}
		rw.Header().Set("Content-Type", "application/rdap+json")
		switch {
		case r.Host == "rdap.verisign.com" && (r.URL.Path == "/com/v1/domain/google.com" || strings.HasPrefix(r.URL.Path, "/com/v1/domain/bench-")):
			rw.Write(google)
		case r.Host == "rdap.markmonitor.com" && r.URL.Path == "/rdap/domain/GOOGLE.COM":
			fmt.Fprint(rw, `{"objectClassName":"domain","ldhName":"google.com","entities":[{"roles":["registrant"],
				"vcardArray":["vcard",[["version",{},"text","4.0"],["fn",{},"text",""],["org",{},"text","Google LLC"]]]}]}`)
		default:
			http.NotFound(rw, r)
		}
	}))
	t.Cleanup(rdapSrv.Close)
	tr := rdapSrv.Client().Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, rdapSrv.Listener.Addr().String())
	}
	tr.TLSClientConfig.ServerName = "example.com" // the httptest certificate's name
	boot, err := rdap.ParseBootstrap([]byte(`{"version":"1.0","publication":"2026-01-01T00:00:00Z","services":[[["com"],["https://rdap.verisign.com/com/v1/"]]]}`))
	if err != nil {
		t.Fatal(err)
	}

	addr := testtool.ServeTCP(t, "127.0.0.1:0", func(conn net.Conn) {
		q, _ := bufio.NewReader(conn).ReadString('\n')
		switch q = strings.TrimSpace(q); q {
		case "io":
			fmt.Fprint(conn, "domain: IO\nrefer: whois.nic.io\n")
		case "google.io":
			b, _ := os.ReadFile("../internal/whois/testdata/noterror/io_google.io.txt")
			conn.Write(b)
		default:
			b, _ := os.ReadFile("../internal/whois/testdata/notfound/io_likexian-have-no-money-to-register.io.txt")
			conn.Write(b)
		}
	})
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	w.resolver = &lookup.Resolver{
		RDAP:     rdap.New(&http.Client{Transport: tr, Timeout: 5 * time.Second}, boot, 4, nil),
		Fallback: whois.New("whois.iana.org:43", whois.WithDialer(dial)),
	}
	return w
}

// startWorker runs the service's worker on the env's database and Redis,
// with the handlers' other dependencies from d.
func startWorker(t testing.TB, env *testEnv, d worker.Deps) {
	t.Helper()
	d.DB, d.Outbox, d.Metrics, d.Log, d.RedisOpt = env.db, env.deps.Outbox, metrics.New(), env.deps.Log, env.redis.Opt
	w := worker.New(d)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Shutdown)
}

// startLookupWorker runs a worker that answers lookups with resolver.
func startLookupWorker(t testing.TB, env *testEnv, resolver *lookup.Resolver) {
	cache := lookup.NewCache(env.redis.Client, slog.New(slog.DiscardHandler))
	t.Cleanup(cache.Close)
	startWorker(t, env, worker.Deps{Resolver: resolver, LookupCache: cache})
}

type whoisReply struct {
	Lookup struct {
		ID     *string `json:"id"`
		Domain string  `json:"domain"`
		Result struct {
			Domain, Status, Registrar, Registrant string
			CreationDate                          string   `json:"creation_date"`
			ExpirationDate                        string   `json:"expiration_date"`
			UpdateDate                            string   `json:"update_date"`
			Nameservers                           []string `json:"nameservers"`
			Emails                                []string `json:"emails"`
			RawSource                             string   `json:"raw_source"`
		} `json:"result"`
		CreatedAt time.Time `json:"created_at"`
	} `json:"lookup"`
	Used, Cap, Remaining int
}

func whoisCall(t *testing.T, env *testEnv, domain string, header ...string) (*httptest.ResponseRecorder, whoisReply) {
	t.Helper()
	w := env.request("POST", "/api/tools/whois", `{"domain":`+strconvQuote(domain)+`}`, header...)
	var r whoisReply
	if w.Code == 201 {
		if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
	}
	return w, r
}

func TestWhoisThroughTheQueue(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	world := newLookupWorld(t)
	startLookupWorker(t, env, world.resolver)

	w, r := whoisCall(t, env, "WWW.Google.com")
	if w.Code != 201 {
		t.Fatalf("= %d %s", w.Code, w.Body)
	}
	res := r.Lookup.Result
	if r.Lookup.ID == nil || r.Lookup.Domain != "google.com" || res.Registrar != "MarkMonitor Inc." || res.RawSource != "RDAP" ||
		res.ExpirationDate != "2028-09-14T04:00:00Z" || res.CreationDate != "1997-09-15T04:00:00Z" || len(res.Nameservers) != 4 ||
		res.Registrant != "Google LLC" || !strings.Contains(res.Status, "client delete prohibited") || r.Used != 1 || r.Cap != 10 || r.Remaining != 9 {
		t.Errorf("reply = %s", w.Body)
	}
	if exactHeader(w, "RateLimit-Policy") != "10;w=86400" || exactHeader(w, "RateLimit-Remaining") != "9" {
		t.Errorf("headers = %v", w.Header())
	}
	var row models.Lookup
	if err := env.db.First(&row, "id = ?", *r.Lookup.ID).Error; err != nil || row.State != models.LookupDone || row.Attempts != 1 {
		t.Errorf("lookup row = %+v, %v", row, err)
	}

	// The second call is answered from the cache: same lookup, no RDAP call.
	for len(world.rdapCalls) > 0 {
		<-world.rdapCalls
	}
	w2, r2 := whoisCall(t, env, "google.com")
	if w2.Code != 201 || *r2.Lookup.ID != *r.Lookup.ID || r2.Used != 2 || len(world.rdapCalls) != 0 {
		t.Errorf("second call = %d %s, %d RDAP calls", w2.Code, w2.Body, len(world.rdapCalls))
	}
}

func TestWhoisFallsBackToWhois(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	startLookupWorker(t, env, newLookupWorld(t).resolver)
	w, r := whoisCall(t, env, "google.io")
	if w.Code != 201 || r.Lookup.Result.RawSource != "FallbackProvider" || r.Lookup.Result.Registrar != "MarkMonitor, Inc." ||
		r.Lookup.Result.Registrant != "Google LLC" {
		t.Errorf("= %d %s", w.Code, w.Body)
	}
}

func TestWhoisNotFound(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	startLookupWorker(t, env, newLookupWorld(t).resolver)
	for _, d := range []string{"unregistered-name.com", "unregistered-name.io"} {
		w, _ := whoisCall(t, env, d)
		if w.Code != 404 {
			t.Fatalf("%s = %d %s", d, w.Code, w.Body)
		}
		if code, _ := typedError(t, w); code != "not_found" {
			t.Errorf("%s code = %s", d, code)
		}
	}
	var states []string
	env.db.Model(&models.Lookup{}).Pluck("state", &states)
	if strings.Join(states, ",") != "not_found,not_found" {
		t.Errorf("lookup states = %v", states)
	}
}

func TestWhoisBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	startLookupWorker(t, env, newLookupWorld(t).resolver)
	for _, body := range []string{``, `{}`, `{"domain":""}`, `{"domain":"not a domain"}`, `{"domain":"com"}`, `{"domain":["a.com"]}`, `{"domain":"a.com","x":1}`} {
		w := env.request("POST", "/api/tools/whois", body)
		if w.Code != 400 {
			t.Errorf("%s = %d %s", body, w.Code, w.Body)
			continue
		}
		typedError(t, w)
	}
	var n int64
	env.db.Model(&models.Lookup{}).Count(&n)
	if n != 0 {
		t.Errorf("%d lookups created by bad input", n)
	}
	if _, r := whoisCall(t, env, "google.com"); r.Used != 1 {
		t.Errorf("used = %d after bad requests and one lookup, want 1 (400s give the unit back)", r.Used)
	}
}

func TestWhoisQuotaResetsAtUTCMidnight(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	startLookupWorker(t, env, newLookupWorld(t).resolver)
	env.now = time.Date(2026, 11, 22, 23, 59, 0, 0, time.UTC)
	for i := range 10 {
		if w, r := whoisCall(t, env, "google.com"); w.Code != 201 || r.Remaining != 9-i {
			t.Fatalf("call %d = %d %s", i+1, w.Code, w.Body)
		}
	}
	w, _ := whoisCall(t, env, "google.com")
	if w.Code != 429 || w.Header().Get("Retry-After") != "60" {
		t.Fatalf("11th = %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if code, _ := typedError(t, w); code != "quota_exceeded" {
		t.Errorf("code = %s", code)
	}
	env.now = env.now.Add(time.Minute)
	if w, r := whoisCall(t, env, "google.com"); w.Code != 201 || r.Used != 1 {
		t.Errorf("after midnight = %d %s", w.Code, w.Body)
	}
}

func TestWhoisIdempotencyKey(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	startLookupWorker(t, env, newLookupWorld(t).resolver)
	first, r1 := whoisCall(t, env, "google.com", "Idempotency-Key", "k-1")
	again, r2 := whoisCall(t, env, "google.com", "Idempotency-Key", "k-1")
	if first.Code != 201 || again.Code != 201 || again.Header().Get("Idempotent-Replayed") != "true" ||
		again.Body.String() != first.Body.String() || r2.Used != r1.Used {
		t.Errorf("replay = %d %v %s", again.Code, again.Header(), again.Body)
	}
	if _, r3 := whoisCall(t, env, "google.com"); r3.Used != 2 {
		t.Errorf("used after a replay = %d, want 2 (the replay spent nothing)", r3.Used)
	}
	if w, _ := whoisCall(t, env, "google.io", "Idempotency-Key", "k-1"); w.Code != 409 {
		t.Errorf("same key, other body = %d", w.Code)
	}
}

func TestBatchWhoisOperation(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	startLookupWorker(t, env, newLookupWorld(t).resolver)
	r := runBatch(t, env, `{"operations":[{"op":"whois_lookup","params":{"domain":"google.com"}},{"op":"whois_lookup","params":{"domain":"no such"}}]}`)
	if r.Results[0].Status != 201 || !strings.Contains(string(r.Results[0].Body), `"registrar":"MarkMonitor Inc."`) ||
		r.Results[1].Status != 400 || r.Failed != 1 {
		t.Errorf("batch = %+v", r)
	}
	if _, after := whoisCall(t, env, "google.com"); after.Used != 2 {
		t.Errorf("used = %d after a batch lookup and a direct one, want 2", after.Used)
	}
}
