package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/availability"
	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/domaininfo"
	"github.com/domaind/domaind/internal/httpserver"
	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/market"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/registry/rtr"
	domainsearch "github.com/domaind/domaind/internal/search"
	"github.com/domaind/domaind/models"
)

// event is one line of the search stream, decoded loosely so a test sees
// exactly which fields were sent.
type event map[string]any

func (e event) kind() string        { s, _ := e["kind"].(string); return s }
func (e event) str(k string) string { s, _ := e[k].(string); return s }

func parseStream(t *testing.T, body string) []event {
	t.Helper()
	var out []event
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

func streamSearch(t *testing.T, env *testEnv, q string) []event {
	t.Helper()
	w := env.request("POST", "/api/domain/search", `{"q":`+strconvQuote(q)+`}`)
	if w.Code != 200 {
		t.Fatalf("search %q = %d %s", q, w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/x-ndjson" {
		t.Fatalf("content type = %q", ct)
	}
	return parseStream(t, w.Body.String())
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// checkOrder checks SPEC §2.5's order: header, rows, primary_done right
// after the primary's row, done last; it returns the rows.
func checkOrder(t *testing.T, events []event) (header event, rows []event) {
	t.Helper()
	if len(events) < 4 || events[0].kind() != "header" || events[len(events)-1].kind() != "done" {
		t.Fatalf("stream = %v, want header ... done", events)
	}
	header = events[0]
	primary := header.str("primary")
	for i, e := range events[1 : len(events)-1] {
		switch e.kind() {
		case "row":
			rows = append(rows, e)
		case "primary_done":
			if len(e) != 1 {
				t.Errorf("primary_done has fields: %v", e)
			}
			if prev := events[i]; prev.kind() != "row" || prev.str("domain") != primary {
				t.Errorf("primary_done follows %v, want the row of %s", prev, primary)
			}
		default:
			t.Errorf("unexpected event %v", e)
		}
	}
	if n := len(events) - 2 - len(rows); n != 1 {
		t.Errorf("%d primary_done events, want 1", n)
	}
	done := events[len(events)-1]
	if done["count"] != float64(len(rows)) {
		t.Errorf("done.count = %v, want %d", done["count"], len(rows))
	}
	if _, ok := done["duration_ms"].(float64); !ok {
		t.Errorf("done.duration_ms = %v", done["duration_ms"])
	}
	return header, rows
}

// sandboxState is what the sandbox registry holds for name, the ground
// truth a row's state must match.
func sandboxState(t *testing.T, db *gorm.DB, name string) (state string, premiumCents *int64) {
	t.Helper()
	var n models.SandboxName
	err := db.First(&n, "name = ?", name).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return availability.Available, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return n.State, n.PremiumCents
}

// A person types a word, or words, into a search box: it is searched as
// one label on .com and the usual alternates, spaces dropped and case
// folded; internationalised rows carry their Unicode form.
func TestSearchAWordAsAPersonTypesIt(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	for q, primary := range map[string]string{"mystartup": "mystartup.com", "My Startup": "mystartup.com", "  Blue Labs.IO ": "bluelabs.io"} {
		header, rows := checkOrder(t, streamSearch(t, env, q))
		if header.str("primary") != primary || len(rows) != len(strings.Split(config.DefaultSearchTLDs, ",")) {
			t.Errorf("search %q: primary %q and %d rows, want %s and the alternates", q, header.str("primary"), len(rows), primary)
		}
	}
	_, rows := checkOrder(t, streamSearch(t, env, "Bücher"))
	for _, r := range rows {
		if r.str("domain") == "xn--bcher-kva.com" && r.str("domain_unicode") != "bücher.com" {
			t.Errorf("IDN row = %v, want domain_unicode bücher.com", r)
		}
		if r.str("domain_unicode") == "" {
			t.Errorf("row %s without domain_unicode", r.str("domain"))
		}
	}
}

func TestSearchChecksTheLabelOnTheCommonTLDs(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	for _, q := range []string{"google.com", "zqxv-domaind-test.io", "nic.dev"} {
		t.Run(q, func(t *testing.T) {
			header, rows := checkOrder(t, streamSearch(t, env, q))
			label, tld, _ := strings.Cut(q, ".")
			want := []string{q}
			for _, s := range strings.Split(config.DefaultSearchTLDs, ",") {
				if s != tld {
					want = append(want, label+"."+s)
				}
			}
			var domains []string
			for _, d := range header["domains"].([]any) {
				domains = append(domains, d.(string))
			}
			if !slices.Equal(domains, want) || header.str("primary") != q || header["primary_index"] != float64(0) {
				t.Errorf("header = %v, want primary %s and domains %v", header, q, want)
			}
			if header.str("request_id") == "" {
				t.Error("header has no request_id")
			}
			if len(rows) != len(want) {
				t.Fatalf("%d rows, want %d", len(rows), len(want))
			}
			for _, r := range rows {
				name := r.str("domain")
				wantState, premium := sandboxState(t, env.db, name)
				if r.str("state") != wantState {
					t.Errorf("%s: state %q, want %q", name, r.str("state"), wantState)
				}
				if r.str("state_label") == "" {
					t.Errorf("%s: no state_label", name)
				}
				wantAvail := wantState == availability.Available || wantState == availability.Premium
				if r["available"] != wantAvail {
					t.Errorf("%s: available = %v, want %v", name, r["available"], wantAvail)
				}
				_, rowTLD, _ := strings.Cut(name, ".")
				price, _ := r["price"].(map[string]any)
				wantRegister := sandboxCents(t, env, rowTLD, "register")
				if premium != nil {
					wantRegister = premium
				}
				if price == nil || price["register_cents"] != float64(*wantRegister) ||
					price["renew_cents"] != float64(*sandboxCents(t, env, rowTLD, "renew")) ||
					price["currency"] != "USD" || price["premium"] != (premium != nil) {
					t.Errorf("%s: price = %v, want register %d", name, r["price"], *wantRegister)
				}
				for _, k := range []string{"listing", "whois_summary", "cached", "meta"} {
					if _, ok := r[k]; !ok {
						t.Errorf("%s: row has no %q", name, k)
					}
				}
				if r["cached"] != false || r["meta"].(map[string]any)["source"] != "registry" {
					t.Errorf("%s: first search cached=%v meta=%v", name, r["cached"], r["meta"])
				}
			}
		})
	}
}

func TestSearchStates(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	var premium models.SandboxName
	if err := env.db.First(&premium, "state = ?", models.SandboxPremium).Error; err != nil {
		t.Fatal(err)
	}
	listed := models.Listing{ID: models.NewID(), Domain: "domaind-listed.net", TLD: "net", BINCents: ptr(int64(250000)),
		FloorCents: ptr(int64(99900)), Currency: "USD", Approved: true, MarketplaceVisible: true}
	hidden := models.Listing{ID: models.NewID(), Domain: "domaind-hidden.net", TLD: "net", BINCents: ptr(int64(100)),
		Currency: "USD", Approved: false, MarketplaceVisible: true}
	if err := env.db.Create([]models.Listing{listed, hidden}).Error; err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		q, state   string
		available  bool
		noPrice    bool
		stateLabel string
	}{
		{"whois.shop", availability.Reserved, false, false, "Reserved"},
		{premium.Name, availability.Premium, true, false, "Premium"},
		{"domaind-listed.net", domainsearch.StateForSale, false, false, "For sale"},
		{"domaind-hidden.net", availability.Available, true, false, "Available"},
		{"example-domaind.museum", availability.Unsupported, false, true, "TLD not offered"},
		{"xn--bcher-kva.ai", domainsearch.StateInvalid, false, false, "No internationalised names under .ai"},
		{"ab.ly", domainsearch.StateInvalid, false, false, "Too short for .ly (3+ characters)"},
		{"abc.ly", availability.Available, true, false, "Available"},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			_, rows := checkOrder(t, streamSearch(t, env, tc.q))
			r := rows[slices.IndexFunc(rows, func(r event) bool { return r.str("domain") == tc.q })]
			if r.str("state") != tc.state || r["available"] != tc.available {
				t.Fatalf("row = %v, want state %s available %v", r, tc.state, tc.available)
			}
			if r.str("state_label") != tc.stateLabel {
				t.Errorf("state_label = %q, want %q", r.str("state_label"), tc.stateLabel)
			}
			if (r["price"] == nil) != tc.noPrice {
				t.Errorf("price = %v, want null: %v", r["price"], tc.noPrice)
			}
		})
	}
	t.Run("listing prices are masked without pricing:read", func(t *testing.T) {
		_, rows := checkOrder(t, streamSearch(t, env, "domaind-listed.net"))
		// Rows come as their checks finish: find the listed name's.
		l := rows[slices.IndexFunc(rows, func(r event) bool { return r.str("domain") == listed.Domain })]["listing"].(map[string]any)
		price := l["price"].(map[string]any)
		if l["id"] != listed.ID || l["domain"] != listed.Domain || price["bin"] != nil || price["floor"] != nil || price["currency"] != "USD" {
			t.Errorf("listing = %v, want %s with masked prices", l, listed.ID)
		}
	})
}

func TestPricingScopeShowsListingPrices(t *testing.T) {
	l := models.Listing{ID: models.NewID(), Domain: "domaind-listed.net", TLD: "net", BINCents: ptr(int64(250050)),
		FloorCents: ptr(int64(99900)), Currency: "USD", Approved: true, MarketplaceVisible: true}
	// The bearer-token middleware sets the scopes a token grants.
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	if pricesVisible(c) {
		t.Fatal("a request without a token unmasks")
	}
	c.Set(scopesCtxKey, []string{scopePricingRead})
	if !pricesVisible(c) {
		t.Fatal("pricing:read does not unmask")
	}
	b, _ := json.Marshal(market.NewView(l, pricesVisible(c)))
	if want := `"price":{"bin":2500.50,"floor":999.00,"currency":"USD"}`; !strings.Contains(string(b), want) {
		t.Errorf("listing = %s, want %s", b, want)
	}
	c.Set(scopesCtxKey, []string{"other"})
	if pricesVisible(c) {
		t.Error("a token without pricing:read unmasks")
	}
}

// countWarmups makes env's server report each warm-up it has run on the
// returned channel.
func countWarmups(t *testing.T, env *testEnv) <-chan string {
	t.Helper()
	ran := make(chan string, 64)
	env.srv.svc.Search.Close()
	var svc *domainsearch.Service
	deps := searchDeps(env)
	deps.WarmFunc = func(ctx context.Context, client, domain string) {
		svc.Warm(ctx, client, domain)
		ran <- domain
	}
	svc = domainsearch.New(deps)
	env.srv.svc.Search = svc
	return ran
}

// waitWarmups waits for n warm-ups to have run.
func waitWarmups(t *testing.T, ran <-chan string, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-ran:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d warm-ups ran", i, n)
		}
	}
}

func TestSearchCachesAndSummarisesWhois(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	ran := countWarmups(t, env)
	cache := lookup.NewCache(env.deps.Redis, slog.New(slog.DiscardHandler))
	t.Cleanup(cache.Close)
	expires := time.Date(2028, 9, 14, 4, 0, 0, 0, time.UTC)
	if err := cache.Finish(context.Background(), lookup.Answer{LookupID: "lk-1", Domain: "google.com", Found: true,
		Record: domaininfo.Record{Domain: "google.com", Registrar: "MarkMonitor Inc.", Expires: expires}}); err != nil {
		t.Fatal(err)
	}
	_, rows := checkOrder(t, streamSearch(t, env, "google.com"))
	waitWarmups(t, ran, len(rows)-1) // the names without a summary are all registered
	com := rows[slices.IndexFunc(rows, func(r event) bool { return r.str("domain") == "google.com" })]
	want := map[string]any{"registrar": "MarkMonitor Inc.", "expiration_date": "2028-09-14T04:00:00Z", "lookup_id": "lk-1"}
	if fmt.Sprint(com["whois_summary"]) != fmt.Sprint(want) {
		t.Errorf("whois_summary = %v, want %v", com["whois_summary"], want)
	}
	// Every other registered name got a background lookup, once.
	var warmed []string
	env.db.Model(&models.Lookup{}).Order("domain").Pluck("domain", &warmed)
	if len(warmed) != len(rows)-1 || slices.Contains(warmed, "google.com") {
		t.Errorf("background lookups for %v, want the %d registered names without a summary", warmed, len(rows)-1)
	}
	var entries int64
	env.db.Model(&models.OutboxEntry{}).Where("task_type = ?", "lookup:run").Count(&entries)
	if entries != int64(len(warmed)) {
		t.Errorf("%d lookup tasks for %d lookups", entries, len(warmed))
	}

	_, again := checkOrder(t, streamSearch(t, env, "google.com"))
	waitWarmups(t, ran, len(again)-1) // handed over again; each finds its name claimed
	for _, r := range again {
		if r["cached"] != true || r["meta"].(map[string]any)["source"] != "cache" || r.str("state") != availability.Registered {
			t.Errorf("second search row %v, want cached registered", r)
		}
	}
	var after int64
	env.db.Model(&models.Lookup{}).Count(&after)
	if after != int64(len(warmed)) {
		t.Errorf("second search started more lookups: %d, want %d", after, len(warmed))
	}
}

func TestSearchBadInput(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	tests := []struct{ name, body, code string }{
		{"no body", ``, "bad_request"},
		{"not json", `q=google.com`, "bad_request"},
		{"missing q", `{}`, "validation_error"},
		{"empty q", `{"q":"  "}`, "validation_error"},
		{"q not a string", `{"q":42}`, "validation_error"},
		{"underscore", `{"q":"goo_gle.com"}`, "validation_error"},
		{"public suffix", `{"q":"co.uk"}`, "validation_error"},
		{"unknown tld", `{"q":"example.notatld"}`, "validation_error"},
		{"emoji", `{"q":"😀.com"}`, "validation_error"},
		{"unknown field", `{"q":"a.com","x":1}`, "validation_error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := env.request("POST", "/api/domain/search", tc.body)
			if w.Code != 400 {
				t.Fatalf("= %d %s, want 400", w.Code, w.Body)
			}
			if code, _ := typedError(t, w); code != tc.code {
				t.Errorf("code = %q, want %q", code, tc.code)
			}
		})
	}
	var lookups int64
	env.db.Model(&models.Lookup{}).Count(&lookups)
	if lookups != 0 {
		t.Errorf("bad requests started %d lookups", lookups)
	}
}

func TestSearchRateLimit(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	for i := range 60 {
		if w := env.request("POST", "/api/domain/search", `{"q":"a.de"}`); w.Code != 200 {
			t.Fatalf("request %d = %d", i+1, w.Code)
		}
	}
	w := env.request("POST", "/api/domain/search", `{"q":"a.de"}`)
	if w.Code != 429 || w.Header().Get("Retry-After") == "" || exactHeader(w, "RateLimit-Policy") != "60;w=60" {
		t.Fatalf("61st = %d %v", w.Code, w.Header())
	}
	if code, _ := typedError(t, w); code != "rate_limited" {
		t.Errorf("code = %q", code)
	}
}

// slowRegistry is a Realtime Register API whose checks of one TLD hang
// until released (or until the caller gives up).
type slowRegistry struct {
	slowTLD string
	release chan struct{}
	started chan string // names whose check is hanging
	once    sync.Once
	srv     *httptest.Server
}

func newSlowRegistry(t *testing.T, slowTLD string) *slowRegistry {
	s := &slowRegistry{slowTLD: slowTLD, release: make(chan struct{}), started: make(chan string, 16)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/domains/"), "/check")
		if strings.HasSuffix(name, "."+s.slowTLD) {
			s.started <- name
			select {
			case <-s.release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"available":true,"price":1000,"currency":"USD"}`)
	}))
	t.Cleanup(s.srv.Close)
	t.Cleanup(s.unblock)
	return s
}

// unblock lets the hanging checks answer.
func (s *slowRegistry) unblock() { s.once.Do(func() { close(s.release) }) }

func (s *slowRegistry) client(t *testing.T) *rtr.Client { return rtrClient(t, s.srv.URL) }

// rtrClient is a Realtime Register client on a test server, without retries.
func rtrClient(tb testing.TB, url string) *rtr.Client {
	tb.Helper()
	c, err := rtr.New(url, "test-key", "test-customer")
	if err != nil {
		tb.Fatal(err)
	}
	c.Retries = 0
	return c
}

func TestSearchRowsOfFastTLDsDoNotWaitForASlowOne(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	slow := newSlowRegistry(t, "io")
	env.withRegistry(slow.client(t))
	srv := httptest.NewServer(env.srv)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/api/domain/search", "application/json", strings.NewReader(`{"q":"fastslow.com"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var seen []string
	for len(seen) < 1+11+1 && sc.Scan() { // header, the 11 fast rows, primary_done
		var e event
		json.Unmarshal(sc.Bytes(), &e)
		seen = append(seen, e.kind()+":"+e.str("domain"))
	}
	if slices.Contains(seen, "row:fastslow.io") {
		t.Fatalf("the slow row came before the fast ones: %v", seen)
	}
	if !slices.Contains(seen, "primary_done:") || !slices.Contains(seen, "row:fastslow.com") {
		t.Fatalf("primary row and primary_done not streamed before the slow row: %v", seen)
	}
	slow.unblock()
	if want, rest := []string{"row:fastslow.io", "done:"}, restOf(sc); !slices.Equal(rest, want) {
		t.Errorf("after release: %v, want %v", rest, want)
	}
}

// The stream has its own write deadlines: a row that comes after the
// server's WriteTimeout (which bounds every other answer) still goes out.
func TestSearchStreamOutlivesTheServersWriteTimeout(t *testing.T) {
	t.Parallel()
	// With an Idempotency-Key the stream is written through the recorder
	// that keeps its answer, which must let the deadlines through.
	for name, key := range map[string]string{"without a key": "", "with an Idempotency-Key": "stream-outlives-1"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			seedTLDs(t, env)
			slow := newSlowRegistry(t, "io")
			env.withRegistry(slow.client(t))
			const writeTimeout = 300 * time.Millisecond
			srv := httptest.NewUnstartedServer(env.srv)
			srv.Config = httpserver.New(env.srv, env.deps.Log, httpserver.Options{WriteTimeout: writeTimeout})
			srv.Start()
			defer srv.Close()
			defer slow.unblock()

			req, _ := http.NewRequest("POST", srv.URL+"/api/domain/search", strings.NewReader(`{"q":"patient.com"}`))
			req.Header.Set("Content-Type", "application/json")
			if key != "" {
				req.Header.Set("Idempotency-Key", key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			for n := 0; n < 1+11+1 && sc.Scan(); n++ { // header, the fast rows, primary_done
			}
			time.Sleep(2 * writeTimeout) // the server's own deadline passes while .io hangs
			slow.unblock()
			if want, rest := []string{"row:patient.io", "done:"}, restOf(sc); !slices.Equal(rest, want) {
				t.Errorf("after the server's write timeout: %v (%v), want %v", rest, sc.Err(), want)
			}
		})
	}
}

// restOf reads the stream's remaining events, each as its kind and
// domain ("row:a.io", "done:").
func restOf(sc *bufio.Scanner) []string {
	var rest []string
	for sc.Scan() {
		var e event
		json.Unmarshal(sc.Bytes(), &e)
		rest = append(rest, e.kind()+":"+e.str("domain"))
	}
	return rest
}

// endRecorder passes checks on to a registry provider and records, for
// each check that failed, why the context the check was given ended.
type endRecorder struct {
	registry.Provider
	ended chan checkEnd
}

type checkEnd struct {
	name       string
	err, cause error // the context's Err and Cause when the check returned
}

func (r endRecorder) Check(ctx context.Context, name string) (registry.Availability, error) {
	a, err := r.Provider.Check(ctx, name)
	if err != nil {
		r.ended <- checkEnd{name: name, err: ctx.Err(), cause: context.Cause(ctx)}
	}
	return a, err
}

func TestSearchClientDisconnectCancelsChecks(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	slow := newSlowRegistry(t, "io")
	rec := endRecorder{Provider: slow.client(t), ended: make(chan checkEnd, 16)}
	// The checker's timeout is the one deadline the hanging check has; at an
	// hour the test never reaches it, so only the client leaving can end it.
	useChecker(t, env, availability.New(rec, env.deps.Redis, time.Hour))
	srv := httptest.NewServer(env.srv)
	defer srv.Close()
	defer slow.unblock() // before srv.Close, so a failed test does not wait on the hanging check

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/api/domain/search", strings.NewReader(`{"q":"goingaway.com"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	rows := 0
	for rows < 11 && sc.Scan() { // every row but the hanging .io one
		var e event
		json.Unmarshal(sc.Bytes(), &e)
		if e.kind() == "row" {
			rows++
		}
	}
	if rows < 11 {
		t.Fatalf("stream ended after %d rows: %v", rows, sc.Err())
	}
	select {
	case <-slow.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the .io check never reached the registry")
	}
	select {
	case e := <-rec.ended:
		t.Fatalf("the check of %s ended (%v) while the client was still there", e.name, e.cause)
	default:
	}
	cancel() // the client goes away while the .io check hangs
	resp.Body.Close()
	select {
	case e := <-rec.ended:
		if e.name != "goingaway.io" {
			t.Errorf("ended check of %s, want goingaway.io", e.name)
		}
		if !errors.Is(e.err, context.Canceled) || !errors.Is(e.cause, context.Canceled) {
			t.Errorf("check ended with err %v, cause %v; want context.Canceled (the client left), not a deadline", e.err, e.cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the hanging check was not cancelled after the client left")
	}
}

// The stream ends right after done, however long the warm-ups it handed
// over take: here they hang until the test ends.
func TestSearchEndsWithoutWaitingForWarmups(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	started := make(chan string, 64)
	release := make(chan struct{})
	env.srv.svc.Search.Close()
	deps := searchDeps(env)
	deps.WarmFunc = func(ctx context.Context, _, domain string) {
		started <- domain
		select {
		case <-release:
		case <-ctx.Done():
		}
	}
	env.srv.svc.Search = domainsearch.New(deps)
	srv := httptest.NewServer(env.srv)
	defer srv.Close()
	defer close(release) // before srv.Close, so a failed test does not wait on the warm-ups

	resp, err := http.Post(srv.URL+"/api/domain/search", "application/json", strings.NewReader(`{"q":"google.com"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body := make(chan []byte, 1)
	go func() { // owned: the test waits for it below, or the deferred Close ends it
		b, _ := io.ReadAll(resp.Body)
		body <- b
	}()
	select {
	case b := <-body:
		checkOrder(t, parseStream(t, string(b)))
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end while its warm-ups hang")
	}
	select {
	case <-started: // a warm-up was handed over, and it cannot have returned yet
	case <-time.After(10 * time.Second):
		t.Fatal("the search of registered names started no warm-up")
	}
}

// fakeRTR is a Realtime Register API whose domain checks answer with the
// JSON body answer gives for the name, or fail with a 503 for "".
func fakeRTR(t *testing.T, answer func(name string) string) *rtr.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := answer(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/domains/"), "/check"))
		w.Header().Set("Content-Type", "application/json")
		if body == "" {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"type":"ServiceUnavailable","message":"try later"}`)
			return
		}
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return rtrClient(t, srv.URL)
}

func TestSearchSaysWhyACheckFailed(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	slow := newSlowRegistry(t, "io")
	// A check that hangs past the checker's timeout, and one the registry refuses.
	useChecker(t, env, availability.New(slow.client(t), env.deps.Redis, 50*time.Millisecond))
	_, rows := checkOrder(t, streamSearch(t, env, "whyfail.io"))
	io := rows[slices.IndexFunc(rows, func(r event) bool { return r.str("domain") == "whyfail.io" })]
	if io.str("state") != availability.Unknown || io["available"] != false ||
		io["meta"].(map[string]any)["error"] != "the registry did not answer in time" {
		t.Errorf("timed-out row = %v, want unknown: the registry did not answer in time", io)
	}

	useChecker(t, env, availability.New(fakeRTR(t, func(string) string { return "" }), env.deps.Redis, time.Hour))
	_, rows = checkOrder(t, streamSearch(t, env, "refused.net")) // another label: the first search cached its answers
	for _, r := range rows {
		if r.str("state") != availability.Unknown || r["meta"].(map[string]any)["error"] != "the registry check failed" {
			t.Errorf("refused row = %v, want unknown: the registry check failed", r)
		}
	}
}

func TestSearchPremiumPriceInTheRegistrysCurrency(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	useChecker(t, env, availability.New(fakeRTR(t, func(name string) string {
		switch name {
		case "gold.com":
			return `{"available":true,"premium":true,"price":125000,"currency":"EUR"}`
		case "gold.net":
			return `{"available":true,"premium":true,"price":99900,"currency":"USD"}`
		}
		return `{"available":false,"reason":"registered"}`
	}), env.deps.Redis, time.Hour))
	_, rows := checkOrder(t, streamSearch(t, env, "gold.com"))
	price := func(domain string) map[string]any {
		t.Helper()
		i := slices.IndexFunc(rows, func(r event) bool { return r.str("domain") == domain })
		p, _ := rows[i]["price"].(map[string]any)
		return p
	}
	// The catalog's renew price is in USD: it does not go with a euro price.
	if p := price("gold.com"); fmt.Sprint(p) != fmt.Sprint(map[string]any{"register_cents": 125000.0, "renew_cents": nil, "currency": "EUR", "premium": true}) {
		t.Errorf("gold.com price = %v, want 125000 EUR, renewal unknown", p)
	}
	renew := sandboxCents(t, env, "net", "renew")
	if p := price("gold.net"); fmt.Sprint(p) != fmt.Sprint(map[string]any{"register_cents": 99900.0, "renew_cents": float64(*renew), "currency": "USD", "premium": true}) {
		t.Errorf("gold.net price = %v, want 99900 USD, renewal %d", p, *renew)
	}
}

func ptr[T any](v T) *T { return &v }

// useChecker puts c in place of the server's registry checker, rebuilding
// the search that holds it.
func useChecker(t *testing.T, env *testEnv, c *availability.Checker) {
	t.Helper()
	env.srv.svc.Search.Close()
	env.srv.svc.Checker = c
	env.srv.svc.Search = domainsearch.New(searchDeps(env))
}

// searchDeps are what env's search is built from, as services.New builds
// it: a test changes one and builds a search of its own.
func searchDeps(env *testEnv) domainsearch.Deps {
	v := env.srv.svc
	return domainsearch.Deps{Checker: v.Checker, Catalog: v.Catalog, Market: v.Market, Lookups: v.Lookups, Whois: v.Whois,
		Limiter: v.Limiter, TLDs: env.deps.Config.SearchTLDs, Log: env.deps.Log}
}
