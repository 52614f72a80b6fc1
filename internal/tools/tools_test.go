package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/internal/httpcheck"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/seocrawl"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// checker is a registry that answers availability from a table: names
// listed are taken, .net names get no answer (the registry times out),
// the rest are available at 1,200 cents.
type checker struct {
	registry.Provider
	taken  map[string]bool
	checks atomic.Int32
}

func (c *checker) Check(_ context.Context, name string) (registry.Availability, error) {
	c.checks.Add(1)
	switch {
	case strings.HasSuffix(name, ".net"):
		return registry.Availability{}, errors.New("the registry timed out")
	case c.taken[name]:
		return registry.Availability{Reason: "registered"}, nil
	}
	return registry.Availability{Available: true, Cents: 1_200, Currency: "USD"}, nil
}

func fieldOf(err error) string {
	if e, ok := fault.As(err); ok && e.Code == fault.Validation {
		return e.Field
	}
	return "not a validation error: " + errString(err)
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// Every tool decodes its body strictly: each malformed body is a
// validation error naming what is wrong.
func TestBodiesAreDecodedStrictly(t *testing.T) {
	t.Parallel()
	suggest, _ := New(Deps{Registry: &checker{}}).Get("domain-suggest")
	for body, field := range map[string]string{
		``:                                     "body",
		`   `:                                  "body",
		`[1]`:                                  "body",
		`{"keywords":"a"}{"keywords":"b"}`:     "body",
		`{"keywords":"green","colour":"blue"}`: "colour",
		`{"keywords":5}`:                       "keywords",
		`{"keywords":"green","tlds":"com"}`:    "tlds",
		`{"keywords":"green","limit":"ten"}`:   "limit",
		`{"keywords":""}`:                      "keywords",
		`{"keywords":"a b c d e f"}`:           "keywords",
		`{"keywords":"green €nergy"}`:          "keywords",
		`{"keywords":"green","tlds":["com","-x"]}`: "tlds[1]",
		`{"keywords":"green","limit":51}`:          "limit",
		`{"keywords":"green","limit":-1}`:          "limit",
		`{"keywords":"green","limit":0}`:           "limit",   // 0 is out of range, as everywhere
		`{"keywords":"green","tlds":["zz"]}`:       "tlds[0]", // no public suffix: no name to check
		`"green"`:                                  "body",
		`5`:                                        "body",
	} {
		_, err := suggest.Parse(context.Background(), []byte(body))
		if fieldOf(err) != field {
			t.Errorf("%s: %v, want a validation error of %s", body, err, field)
		}
		if err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "tools.")) {
			t.Errorf("%s: %q names the code's types", body, err)
		}
	}
	crawl, _ := New(Deps{Registry: &checker{}}).Get("seo-crawl")
	for _, body := range []string{`{"url":"https://example.com/","max_pages":0}`, `{"url":"https://example.com/","max_pages":101}`} {
		if _, err := crawl.Parse(context.Background(), []byte(body)); fieldOf(err) != "max_pages" {
			t.Errorf("%s: %v, want a validation error of max_pages", body, err)
		}
	}
}

// domain-suggest's canonical input (its cache key) is the same for the
// same request however it was written, and its run offers available
// names best first, up to the limit, saying which were taken or not
// answered for.
func TestDomainSuggest(t *testing.T) {
	t.Parallel()
	reg := &checker{taken: map[string]bool{"greenenergy.com": true, "green-energy.com": true}}
	r := New(Deps{Registry: reg})
	tool, ok := r.Get("domain-suggest")
	if !ok || tool.Async || tool.TTL == 0 || !slices.Contains(r.Slugs(), "seo-crawl") {
		t.Fatalf("domain-suggest = %+v, %v; slugs %v", tool, ok, r.Slugs())
	}
	ctx := context.Background()
	a, err := tool.Parse(ctx, []byte(`{"keywords":" Green,  ENERGY ","tlds":["COM",".com","net"],"limit":3}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := tool.Parse(ctx, []byte(`{"limit":3,"tlds":["com","net"],"keywords":"green energy"}`))
	if string(a) != string(b) || !strings.Contains(string(a), `"keywords":"green energy"`) {
		t.Errorf("canonical inputs %s and %s, want one", a, b)
	}
	out, err := tool.Run(ctx, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := out.(SuggestResult)
	var got []string
	for _, s := range res.Suggestions {
		got = append(got, s.Domain)
	}
	want := []string{"getgreenenergy.com"} // of the first six names: two taken, three unanswered
	if !slices.Equal(got, want) || res.Checked != 6 || int(reg.checks.Load()) != res.Checked ||
		len(res.Unavailable) != 2 || len(res.Unknown) != 3 || res.Suggestions[0].PriceCents != 1_200 {
		t.Errorf("suggestions %v (want %v), %d checked, unavailable %+v, unknown %v", got, want, res.Checked, res.Unavailable, res.Unknown)
	}
	encoded, _ := json.Marshal(res)
	if !strings.Contains(string(encoded), `"keywords":["green","energy"]`) {
		t.Errorf("the result as JSON: %s", encoded)
	}

	two, _ := tool.Parse(ctx, []byte(`{"keywords":"green energy","tlds":["com"],"limit":2}`))
	out, err = tool.Run(ctx, two, nil)
	if res, _ := out.(SuggestResult); err != nil || len(res.Suggestions) != 2 || res.Suggestions[0].Domain != "getgreenenergy.com" ||
		res.Suggestions[1].Domain != "trygreenenergy.com" || res.Checked != 4 {
		t.Errorf("a limit of 2 = %+v, %v; want the first two available names of four checked", out, err)
	}

	dark, _ := tool.Parse(ctx, []byte(`{"keywords":"green","tlds":["net"]}`))
	if _, err := tool.Run(ctx, dark, nil); err == nil {
		t.Error("a run the registry answered nothing of succeeded")
	}
	if _, err := tool.Run(ctx, json.RawMessage(`{"keywords":`), nil); err == nil {
		t.Error("a stored input that does not decode ran")
	}
}

// A job is queued with its task and read back by its tool's status only,
// until it expires.
func TestJobsQueueAndGet(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	ob := outbox.New(db, platformtest.NewRedis(t).Client, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { ob.Close() })
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	jobs := NewJobs(db, ob, func() time.Time { return now })
	ctx := context.Background()
	job, err := jobs.Queue(ctx, "seo-crawl", json.RawMessage(`{"url":"https://example.com/"}`))
	if err != nil || job.State != models.JobQueued || !job.ExpiresAt.Equal(now.Add(JobRetention)) {
		t.Fatalf("queued = %+v, %v", job, err)
	}
	if got, err := jobs.Get(ctx, "seo-crawl", job.ID); err != nil || got.ID != job.ID {
		t.Errorf("get = %+v, %v", got, err)
	}
	if _, err := jobs.Get(ctx, "dns-lookup", job.ID); fieldOf(err) != "not a validation error: "+errString(err) || !strings.Contains(errString(err), "no dns-lookup job") {
		t.Errorf("another tool's status: %v", err)
	}
	if _, err := jobs.Get(ctx, "seo-crawl", "job_nope"); err == nil || !strings.Contains(err.Error(), "is not a job id") {
		t.Errorf("a malformed id: %v", err)
	}
	now = now.Add(JobRetention)
	if _, err := jobs.Get(ctx, "seo-crawl", job.ID); err == nil {
		t.Error("an expired job was found")
	}
}

// An inline run's answer is cached for the same input within the tool's
// TTL; a failed run is a RunError and is not cached, so the next call
// runs again.
func TestInlineRunsCacheAnswersNotFailures(t *testing.T) {
	t.Parallel()
	reg := &checker{taken: map[string]bool{}}
	in := NewInline(New(Deps{Registry: reg}), platformtest.NewRedis(t).Client, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()

	want := SuggestInput{Keywords: "inline cache", TLDs: []string{"com"}}
	first, err := in.Suggest(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	checks := reg.checks.Load()
	again, err := in.Suggest(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if checks == 0 || reg.checks.Load() != checks || !slices.Equal(first.Suggestions, again.Suggestions) {
		t.Errorf("second run checked %d more names and answered %v after %v, want the cached answer", reg.checks.Load()-checks, again, first)
	}

	var runs atomic.Int32
	broken := Tool{Slug: "broken", TTL: time.Minute, Run: func(context.Context, json.RawMessage, Progress) (any, error) {
		runs.Add(1)
		return nil, errors.New("the target reset the connection")
	}}
	for range 2 {
		_, _, err := in.Run(ctx, broken, json.RawMessage(`{"n":1}`))
		var re *RunError
		if !errors.As(err, &re) {
			t.Fatalf("failed run = %v, want a RunError", err)
		}
	}
	if runs.Load() != 2 {
		t.Errorf("the failing tool ran %d times for two calls, want 2 (failures are not cached)", runs.Load())
	}
}

// askedDNS records the names it is asked; it knows inside.example.com,
// which resolves to a private address, public.example.com, and intranet
// and intranet.example.com, which resolve to 127.0.0.1, where the tests'
// servers listen; the DNS of slow.example.com does not answer.
type askedDNS struct {
	mu    sync.Mutex
	asked []string
}

func (d *askedDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	d.asked = append(d.asked, host)
	d.mu.Unlock()
	switch strings.ToLower(strings.TrimSuffix(host, ".")) {
	case "inside.example.com":
		return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, nil
	case "public.example.com":
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	case "intranet", "intranet.example.com":
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	case "slow.example.com":
		return nil, &net.DNSError{Err: "i/o timeout", Name: host, IsTimeout: true}
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// The tools that reach a host take an IP address or a name under a public
// suffix: a name of the service's own network is invalid as written, and
// never looked up. A public name that does not resolve and one that
// resolves inside are refused in the same words.
func TestToolsLookUpOnlyPublicNames(t *testing.T) {
	t.Parallel()
	dns := &askedDNS{}
	r := New(Deps{Fetch: fetch.New(fetch.Options{Resolver: dns})})
	ctx := context.Background()
	for _, tc := range []struct{ slug, body, field string }{
		{"http-headers", `{"url":"http://redis/"}`, "url"},
		{"http-headers", `{"url":"http://redis.default.svc.cluster.local:6379/"}`, "url"},
		{"seo-crawl", `{"url":"https://intranet.corp/"}`, "url"},
		{"ssl-check", `{"host":"vault.service.consul"}`, "host"},
		{"ssl-check", `{"host":"ldap"}`, "host"},
		{"dns-lookup", `{"domain":"redis.default.svc.cluster.local"}`, "domain"},
	} {
		tool, _ := r.Get(tc.slug)
		if _, err := tool.Parse(ctx, []byte(tc.body)); fieldOf(err) != tc.field {
			t.Errorf("%s %s: %v, want a validation error of %s", tc.slug, tc.body, err, tc.field)
		}
	}
	if len(dns.asked) != 0 {
		t.Errorf("the resolver was asked %q, want nothing", dns.asked)
	}

	headers, _ := r.Get("http-headers")
	_, missing := headers.Parse(ctx, []byte(`{"url":"http://nowhere.example.com/"}`))
	_, inside := headers.Parse(ctx, []byte(`{"url":"http://inside.example.com/"}`))
	var a, b *fetch.BlockedError
	if !errors.As(missing, &a) || !errors.As(inside, &b) ||
		strings.ReplaceAll(a.Error(), "nowhere", "NAME") != strings.ReplaceAll(b.Error(), "inside", "NAME") {
		t.Errorf("a name that does not resolve = %v; one that resolves inside = %v; want one refusal", missing, inside)
	}
	if _, err := headers.Parse(ctx, []byte(`{"url":"http://slow.example.com/"}`)); fieldOf(err) != "url" || !errors.Is(err, fault.ErrRetryLater) {
		t.Errorf("a name whose DNS does not answer = %v, want an error of url to retry later", err)
	}
	canonical, err := headers.Parse(ctx, []byte(`{"url":"http://Public.EXAMPLE.com.:8443/a?b=1"}`))
	if want := `{"url":"http://public.example.com:8443/a?b=1"}`; err != nil || string(canonical) != want {
		t.Errorf("canonical input = %s, %v; want %s", canonical, err, want)
	}
	if want := []string{"nowhere.example.com.", "inside.example.com.", "slow.example.com.", "public.example.com."}; !slices.Equal(dns.asked, want) {
		t.Errorf("the resolver was asked %q, want %q", dns.asked, want)
	}
}

// hostsSeen is a test server's count of requests by Host header and path.
type hostsSeen struct {
	mu   sync.Mutex
	seen map[string]int
}

func (h *hostsSeen) add(r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen[r.Host+r.URL.Path]++
}

func (h *hostsSeen) count(hostPath string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[hostPath]
}

// The tools hold every request to the rule their target is held to: a
// redirect (of http-headers, or of a crawled page) to a name outside the
// public suffixes, such as intranet, is refused without looking it up,
// even from a target given as an IP address; one to a public name is
// followed. The crawl does not fetch links to other hosts at all.
func TestToolsFollowOnlyPublicNames(t *testing.T) {
	t.Parallel()
	hits := &hostsSeen{seen: map[string]int{}}
	var port string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.add(r)
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<title>Home</title><a href="/to-intranet">a</a><a href="/to-public">b</a><a href="http://intranet:%s/linked">c</a>`, port)
		case "/to-intranet":
			http.Redirect(w, r, "http://intranet:"+port+"/landed", http.StatusFound)
		case "/to-public":
			http.Redirect(w, r, "http://intranet.example.com:"+port+"/landed", http.StatusFound)
		default:
			fmt.Fprint(w, "landed")
		}
	}))
	t.Cleanup(srv.Close)
	port = srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	dns := &askedDNS{}
	r := New(Deps{Fetch: fetch.New(fetch.Options{Resolver: dns, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})})
	ctx := context.Background()
	run := func(slug, url string) (any, error) {
		t.Helper()
		tool, _ := r.Get(slug)
		input, err := tool.Parse(ctx, []byte(`{"url":"`+url+`"}`))
		if err != nil {
			t.Fatalf("%s %s: %v", slug, url, err)
		}
		return tool.Run(ctx, input, nil)
	}
	refusal := "refused to fetch http://intranet:" + port + "/landed: intranet is not an IP address or a name under a public suffix"

	_, err := run("http-headers", srv.URL+"/to-intranet")
	var blocked *fetch.BlockedError
	if !errors.As(err, &blocked) || err.Error() != refusal {
		t.Errorf("http-headers redirected to intranet = %v, want %q", err, refusal)
	}
	out, err := run("http-headers", srv.URL+"/to-public")
	if res, ok := out.(*httpcheck.Result); err != nil || !ok || res.Status != 200 || res.FinalURL != "http://intranet.example.com:"+port+"/landed" {
		t.Errorf("http-headers redirected to intranet.example.com = %+v, %v; want it followed", out, err)
	}

	out, err = run("seo-crawl", srv.URL+"/")
	report, ok := out.(*seocrawl.Report)
	if err != nil || !ok {
		t.Fatalf("seo-crawl = %v, %v", out, err)
	}
	pages := map[string]seocrawl.Page{}
	for _, p := range report.Pages {
		pages[p.URL] = p
	}
	if p := pages[srv.URL+"/to-intranet"]; p.Error != refusal || p.Status != 0 {
		t.Errorf("the crawled page redirecting to intranet = %+v, want it refused: %q", p, refusal)
	}
	if p := pages[srv.URL+"/to-public"]; p.Error != "" || p.Status != 200 || p.FinalURL != "http://intranet.example.com:"+port+"/landed" {
		t.Errorf("the crawled page redirecting to intranet.example.com = %+v, want it followed", p)
	}
	if n := len(report.Pages); n != 3 {
		t.Errorf("%d pages crawled, want 3 (the link to intranet is another host's)", n)
	}

	if n := hits.count("intranet:" + port + "/landed"); n != 0 {
		t.Errorf("intranet was fetched %d times, want never", n)
	}
	if n := hits.count("intranet:" + port + "/linked"); n != 0 {
		t.Errorf("the crawl fetched its link to intranet %d times, want never", n)
	}
	dns.mu.Lock()
	defer dns.mu.Unlock()
	if slices.Contains(dns.asked, "intranet.") || slices.Contains(dns.asked, "intranet") || !slices.Contains(dns.asked, "intranet.example.com.") {
		t.Errorf("the resolver was asked %q, want intranet.example.com and never intranet", dns.asked)
	}
}
