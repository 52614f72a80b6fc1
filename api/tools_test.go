package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/internal/tools"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/worker"
)

// serveTestSite serves h on testSiteAddr and returns its base URL under
// the name site.example.net.
func serveTestSite(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", testSiteAddr+":0")
	if err != nil {
		t.Fatalf("listen on %s (a loopback address of its own): %v", testSiteAddr, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return fmt.Sprintf("http://site.example.net:%d", ln.Addr().(*net.TCPAddr).Port)
}

// smallSite is three pages, one linking to a missing one.
func smallSite() http.Handler {
	pages := map[string]string{
		"/":      `<html><head><title>Home</title><meta name="description" content="The home page"></head><body><h1>Home</h1><a href="/about">About</a> <a href="/gone">Gone</a></body></html>`,
		"/about": `<html><head><title>About</title></head><body><h1>About us</h1><a href="/">Home</a></body></html>`,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(page))
	})
}

type ticket struct {
	OK     bool `json:"ok"`
	Cached bool `json:"cached"`
	Result struct {
		Mode      string `json:"mode"`
		JobID     string `json:"jobId"`
		StatusURL string `json:"status_url"`
	} `json:"result"`
}

type jobStatus struct {
	Status   string          `json:"status"`
	Result   json.RawMessage `json:"result"`
	Error    string          `json:"error"`
	Progress struct{ Done, Planned int }
	Created  *time.Time `json:"created_at"`
	Started  *time.Time `json:"started_at"`
	Finished *time.Time `json:"finished_at"`
}

func (env *testEnv) jobStatus(t testing.TB, slug, id string) (int, jobStatus) {
	t.Helper()
	w := env.request("GET", "/api/tools/"+slug+"/status/"+id, "")
	var st jobStatus
	if w.Code == 200 {
		if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
			t.Fatalf("status body %s: %v", w.Body, err)
		}
	}
	return w.Code, st
}

func (env *testEnv) waitJob(t *testing.T, slug, id string) jobStatus {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, st := env.jobStatus(t, slug, id)
		if code != 200 {
			t.Fatalf("status = %d", code)
		}
		if st.Status == models.JobDone || st.Status == models.JobFailed {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after 30 s", id, st.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSEOCrawlIsAJobCallersPoll(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	site := serveTestSite(t, smallSite())
	w := env.request("POST", "/api/tools/seo-crawl", fmt.Sprintf(`{"url":%q}`, site+"/"))
	if w.Code != 202 {
		t.Fatalf("seo-crawl = %d %s", w.Code, w.Body)
	}
	var tk ticket
	json.Unmarshal(w.Body.Bytes(), &tk)
	if !tk.OK || tk.Cached || tk.Result.Mode != "async" || !secret.IsID(tk.Result.JobID, tools.JobPrefix) {
		t.Fatalf("ticket = %s", w.Body)
	}
	if want := "http://api.test/api/tools/seo-crawl/status/" + tk.Result.JobID; tk.Result.StatusURL != want || w.Header().Get("Location") != want {
		t.Errorf("status_url %q, Location %q; want both %q", tk.Result.StatusURL, w.Header().Get("Location"), want)
	}
	// No worker yet: the job waits, as its row says.
	if code, st := env.jobStatus(t, "seo-crawl", tk.Result.JobID); code != 200 || st.Status != "queued" || st.Started != nil || st.Created == nil {
		t.Errorf("before a worker: %d %+v", code, st)
	}

	startWorker(t, env, worker.Deps{Tools: env.deps.Tools})
	st := env.waitJob(t, "seo-crawl", tk.Result.JobID)
	var report struct {
		Pages []struct {
			URL    string `json:"url"`
			Status int    `json:"status"`
			Title  string `json:"title"`
		} `json:"pages"`
		Summary struct {
			Findings struct {
				BrokenLinks []struct {
					URL        string   `json:"url"`
					LinkedFrom []string `json:"linked_from"`
				} `json:"broken_links"`
			} `json:"findings"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(st.Result, &report); err != nil {
		t.Fatalf("result %s: %v", st.Result, err)
	}
	if st.Status != "done" || st.Finished == nil || st.Started == nil || st.Progress.Done != 3 || st.Progress.Planned != 3 || len(report.Pages) != 3 {
		t.Fatalf("done job = %+v, %d pages", st, len(report.Pages))
	}
	broken := report.Summary.Findings.BrokenLinks
	if len(broken) != 1 || broken[0].URL != site+"/gone" || len(broken[0].LinkedFrom) != 1 || broken[0].LinkedFrom[0] != site+"/" {
		t.Errorf("broken links = %+v", broken)
	}

	// The job is seo-crawl's, kept a day, under an id that must be well formed.
	if code, _ := env.jobStatus(t, "dns-lookup", tk.Result.JobID); code != 404 {
		t.Errorf("the job under another tool = %d, want 404", code)
	}
	wantError(t, "unknown job", env.request("GET", "/api/tools/seo-crawl/status/job_0123456789abcdef01234567", ""), 404, "not_found")
	wantError(t, "malformed id", env.request("GET", "/api/tools/seo-crawl/status/1%27%20OR%201=1", ""), 400, "validation_error")
	wantError(t, "unknown tool", env.request("GET", "/api/tools/nope/status/"+tk.Result.JobID, ""), 404, "not_found")
	// whois is a tool whose route answers at once: its status says so,
	// not that there is no tool whois among the tools it lists.
	w = env.request("GET", "/api/tools/whois/status/"+tk.Result.JobID, "")
	if _, msg := typedError(t, w); w.Code != 404 || !strings.Contains(msg, "whois has no jobs") {
		t.Errorf("whois status = %d %s, want 404 saying whois has no jobs", w.Code, w.Body)
	}
	env.now = env.now.Add(25 * time.Hour)
	wantError(t, "a job past its day", env.request("GET", "/api/tools/seo-crawl/status/"+tk.Result.JobID, ""), 404, "not_found")
}

func TestAJobTheWorkerCannotRunEndsFailedWithAReason(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	// The name was public when the job was accepted and points inside now
	// (DNS rebinding): the crawl is refused when it runs.
	job, err := env.srv.svc.Jobs.Queue(context.Background(), "seo-crawl", json.RawMessage(`{"url":"http://internal.example.com/","max_pages":5}`))
	if err != nil {
		t.Fatal(err)
	}
	startWorker(t, env, worker.Deps{Tools: env.deps.Tools})
	st := env.waitJob(t, "seo-crawl", job.ID)
	if st.Status != "failed" || !strings.Contains(st.Error, "not to a public address") || strings.Contains(st.Error, "10.0.0.7") || st.Finished == nil {
		t.Errorf("job = %+v, want failed saying why in general terms, without the address", st)
	}
}

func TestToolsRefuseBadInputAndInternalTargets(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	tests := []struct {
		what, slug, body string
		status           int
		code, field      string
	}{
		{"unknown tool", "port-scan", `{}`, 404, "not_found", ""},
		{"no body", "seo-crawl", ``, 400, "validation_error", "body"},
		{"not JSON", "seo-crawl", `{"url":`, 400, "validation_error", "body"},
		{"no url", "seo-crawl", `{}`, 400, "validation_error", "url"},
		{"url not a string", "seo-crawl", `{"url":42}`, 400, "validation_error", "url"},
		{"unknown field", "seo-crawl", `{"url":"http://site.example.net/","depth":9}`, 400, "validation_error", "depth"},
		{"too many pages", "seo-crawl", `{"url":"http://site.example.net/","max_pages":101}`, 400, "validation_error", "max_pages"},
		{"a name of our network", "seo-crawl", `{"url":"http://redis/"}`, 400, "validation_error", "url"},
		{"a name under no public suffix", "http-headers", `{"url":"http://redis.default.svc.cluster.local:6379/"}`, 400, "validation_error", "url"},
		{"http-headers without url", "http-headers", `{}`, 400, "validation_error", "url"},
		{"ssl-check of an address", "ssl-check", `{"host":"10.0.0.1"}`, 400, "validation_error", "host"},
		{"ssl-check of a name of our network", "ssl-check", `{"host":"redis.svc.cluster.local"}`, 400, "validation_error", "host"},
		{"bad domain", "dns-lookup", `{"domain":"not a domain"}`, 400, "validation_error", "domain"},
		{"an internal name", "dns-lookup", `{"domain":"redis.default.svc.cluster.local"}`, 400, "validation_error", "domain"},
		{"a huge url", "http-headers", `{"url":"http://site.example.net/` + strings.Repeat("a", 2048) + `"}`, 400, "validation_error", "url"},
		{"no keywords", "domain-suggest", `{"keywords":"  "}`, 400, "validation_error", "keywords"},
		{"odd keyword", "domain-suggest", `{"keywords":"caf\u00e9!"}`, 400, "validation_error", "keywords"},
	}
	for _, tc := range tests {
		env.now = env.now.Add(6 * time.Minute)
		w := env.request("POST", "/api/tools/"+tc.slug, tc.body)
		wantError(t, tc.what, w, tc.status, tc.code)
		var body struct{ Error struct{ Field string } }
		json.Unmarshal(w.Body.Bytes(), &body)
		if body.Error.Field != tc.field {
			t.Errorf("%s: field %q, want %q", tc.what, body.Error.Field, tc.field)
		}
	}
	for _, target := range []string{
		"http://127.0.0.1/", "http://[::1]/", "http://10.1.2.3/", "http://169.254.169.254/latest/meta-data/",
		"http://internal.example.com/", "http://2130706433/", "http://0177.0.0.1/", "http://0x7f.0.0.1/",
		"http://100.64.0.1/", "http://[fd00::1]/", "ftp://site.example.net/", "http://user:pw@site.example.net/",
	} {
		env.now = env.now.Add(6 * time.Minute) // refused requests count against the quota of 10 an hour
		w := env.request("POST", "/api/tools/seo-crawl", fmt.Sprintf(`{"url":%q}`, target))
		wantError(t, "crawl of "+target, w, 400, "target_refused")
	}
	var jobs int64
	env.db.Model(&models.ToolJob{}).Count(&jobs)
	if jobs != 0 {
		t.Errorf("%d jobs made from refused requests, want none", jobs)
	}
}

func TestToolQuotaPerClient(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	for i := range 30 {
		w := env.request("POST", "/api/tools/domain-suggest", `{"keywords":"green energy","tlds":["com"]}`)
		if w.Code != 200 {
			t.Fatalf("request %d = %d %s", i+1, w.Code, w.Body)
		}
	}
	w := env.request("POST", "/api/tools/domain-suggest", `{"keywords":"green energy","tlds":["com"]}`)
	wantError(t, "31st request of the hour", w, 429, "rate_limited")
	if h := w.Header(); h.Get("Retry-After") == "" || h["RateLimit-Policy"][0] != "30;w=3600" || h["RateLimit-Remaining"][0] != "0" {
		t.Errorf("headers = %v", w.Header())
	}
	// Quotas are per tool.
	if w := env.request("POST", "/api/tools/seo-crawl", `{}`); w.Code != 400 {
		t.Errorf("another tool = %d, want its own quota (and a 400 for the empty input)", w.Code)
	}
	env.now = env.now.Add(time.Hour)
	if w := env.request("POST", "/api/tools/domain-suggest", `{"keywords":"green energy","tlds":["com"]}`); w.Code != 200 {
		t.Errorf("an hour later = %d", w.Code)
	}
}

func TestDomainSuggestAnswersInlineAndFromTheCache(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	w := env.request("POST", "/api/tools/domain-suggest", `{"keywords":"Google","tlds":["com",".io"],"limit":5}`)
	var first struct {
		OK     bool `json:"ok"`
		Cached bool `json:"cached"`
		Result struct {
			Suggestions []struct {
				Domain     string `json:"domain"`
				Available  bool   `json:"available"`
				PriceCents int64  `json:"price_cents"`
			} `json:"suggestions"`
			Unavailable []struct{ Domain, Reason string } `json:"unavailable"`
		} `json:"result"`
	}
	json.Unmarshal(w.Body.Bytes(), &first)
	if w.Code != 200 || !first.OK || first.Cached || len(first.Result.Suggestions) != 5 {
		t.Fatalf("first = %d %s", w.Code, w.Body)
	}
	comCents := *sandboxCents(t, env, "com", "register")
	for _, s := range first.Result.Suggestions {
		if !s.Available || s.PriceCents <= 0 || (strings.HasSuffix(s.Domain, ".com") && s.PriceCents != comCents) {
			t.Errorf("suggestion %+v", s)
		}
	}
	if u := first.Result.Unavailable; len(u) == 0 || u[0].Domain != "google.com" || u[0].Reason != "registered" {
		t.Errorf("unavailable = %+v, want google.com first, registered", u)
	}
	w = env.request("POST", "/api/tools/domain-suggest", `{"keywords":" GOOGLE ","tlds":["COM","io"],"limit":5}`)
	var second struct {
		Cached bool            `json:"cached"`
		Result json.RawMessage `json:"result"`
	}
	json.Unmarshal(w.Body.Bytes(), &second)
	firstResult, _ := json.Marshal(first.Result)
	if w.Code != 200 || !second.Cached || !strings.Contains(string(second.Result), first.Result.Suggestions[0].Domain) {
		t.Errorf("the same input again = %d %s (first %s)", w.Code, w.Body, firstResult)
	}
}

func TestHTTPHeadersFollowsRedirectsAndRefusesInternalOnes(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	var hits int
	site := serveTestSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		switch r.URL.Path {
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/new":
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Write([]byte("hello"))
		case "/inside":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		}
	}))
	w := env.request("POST", "/api/tools/http-headers", fmt.Sprintf(`{"url":%q}`, site+"/old"))
	var got struct {
		OK, Cached bool
		Result     struct {
			FinalURL  string `json:"final_url"`
			Status    int    `json:"status"`
			Redirects []struct {
				URL    string `json:"url"`
				Status int    `json:"status"`
			} `json:"redirects"`
			Security struct{ Present, Missing []string }
		}
	}
	json.Unmarshal(w.Body.Bytes(), &got)
	if w.Code != 200 || !got.OK || got.Cached || got.Result.FinalURL != site+"/new" || got.Result.Status != 200 ||
		len(got.Result.Redirects) != 1 || got.Result.Redirects[0].Status != 301 {
		t.Fatalf("http-headers = %d %s", w.Code, w.Body)
	}
	if strings.Join(got.Result.Security.Present, ",") != "X-Content-Type-Options" || len(got.Result.Security.Missing) != 4 {
		t.Errorf("security = %+v, want nosniff present and 4 missing (HSTS is only asked of https)", got.Result.Security)
	}
	before := hits
	w = env.request("POST", "/api/tools/http-headers", fmt.Sprintf(`{"url":%q}`, site+"/old"))
	if json.Unmarshal(w.Body.Bytes(), &got); !got.Cached || hits != before {
		t.Errorf("repeat = %s after %d more requests to the site, want a cached answer", w.Body, hits-before)
	}
	w = env.request("POST", "/api/tools/http-headers", fmt.Sprintf(`{"url":%q}`, site+"/inside"))
	wantError(t, "a redirect to the metadata address", w, 400, "target_refused")
	for _, target := range []string{"http://127.0.0.1/", "http://internal.example.com/", "http://0177.0.0.1/"} {
		wantError(t, "http-headers of "+target, env.request("POST", "/api/tools/http-headers", fmt.Sprintf(`{"url":%q}`, target)), 400, "target_refused")
	}
}

func TestSSLCheckDescribesTheCertificate(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	ln, err := net.Listen("tcp", testSiteAddr+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.StartTLS() // httptest's certificate, for example.com: neither trusted nor for site.example.net
	t.Cleanup(srv.Close)
	port := ln.Addr().(*net.TCPAddr).Port
	w := env.request("POST", "/api/tools/ssl-check", fmt.Sprintf(`{"host":"site.example.net","port":%d}`, port))
	var got struct {
		OK     bool
		Result struct {
			Host        string `json:"host"`
			TLSVersion  string `json:"tls_version"`
			Verified    bool   `json:"verified"`
			VerifyError string `json:"verify_error"`
			Leaf        struct {
				SANs     []string `json:"sans"`
				DaysLeft int      `json:"days_left"`
			} `json:"leaf"`
		}
	}
	json.Unmarshal(w.Body.Bytes(), &got)
	if w.Code != 200 || !got.OK || got.Result.Host != "site.example.net" || got.Result.TLSVersion == "" || got.Result.Verified ||
		got.Result.VerifyError == "" || !slices.Contains(got.Result.Leaf.SANs, "example.com") || got.Result.Leaf.DaysLeft <= 0 {
		t.Errorf("ssl-check = %d %s", w.Code, w.Body)
	}
	refused := env.request("POST", "/api/tools/ssl-check", `{"host":"internal.example.com"}`)
	wantError(t, "ssl-check of a private address", refused, 400, "target_refused")
	if _, msg := typedError(t, refused); strings.Contains(msg, "10.0.0.7") || !strings.Contains(msg, "not to a public address") {
		t.Errorf("refusal message %q, want it refused in general terms without the address", msg)
	}
	wantError(t, "port out of range", env.request("POST", "/api/tools/ssl-check", `{"host":"site.example.net","port":70000}`), 400, "validation_error")
}

// ... nor kept for its Idempotency-Key: a retry with the key runs again.
func TestAnInlineToolWhoseTargetFailsAnswersNotOKAndIsNotCached(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t) // its DNS resolver does not answer
	for range 2 {
		w := env.request("POST", "/api/tools/dns-lookup", `{"domain":"Example.COM"}`, "Idempotency-Key", "lookup-once")
		if replayed := w.Header().Get("Idempotent-Replayed"); replayed != "" {
			t.Errorf("the second call with the key: Idempotent-Replayed %q, want it run again", replayed)
		}
		var got struct {
			OK, Cached bool
			Result     struct{ Error string }
		}
		json.Unmarshal(w.Body.Bytes(), &got)
		if w.Code != 200 || got.OK || got.Cached || got.Result.Error == "" || strings.Contains(got.Result.Error, "127.0.0.1") {
			t.Errorf("dns-lookup with no resolver = %d %s, want ok false with an error that does not name the resolver, not cached", w.Code, w.Body)
		}
	}
}

// A public name that does not resolve and one that resolves inside our
// network get one answer, word for word but the name, from every tool that
// reaches a host and from a redirect: whoever asks cannot tell which names
// our network has.
func TestToolsRefuseMissingAndInternalNamesAlike(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	site := serveTestSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+strings.TrimPrefix(r.URL.Path, "/to/")+"/", http.StatusFound)
	}))
	// answer is the status and body of a request for a tool of name, with
	// the name replaced by NAME.
	answer := func(slug, body, name string) string {
		env.now = env.now.Add(6 * time.Minute) // past the quotas
		w := env.request("POST", "/api/tools/"+slug, fmt.Sprintf(body, name))
		return fmt.Sprintf("%d %s", w.Code, strings.ReplaceAll(w.Body.String(), name, "NAME"))
	}
	for _, tc := range []struct{ slug, body string }{
		{"seo-crawl", `{"url":"http://%s/"}`},
		{"http-headers", `{"url":"https://%s:8443/x"}`},
		{"ssl-check", `{"host":"%s"}`},
		{"http-headers", `{"url":"` + site + `/to/%s"}`},
	} {
		missing := answer(tc.slug, tc.body, "nowhere.example.com")
		inside := answer(tc.slug, tc.body, "internal.example.com")
		if missing != inside || !strings.HasPrefix(missing, "400 ") || !strings.Contains(missing, "target_refused") {
			t.Errorf("%s %s:\n a name that does not resolve = %s\n one that resolves inside = %s\nwant one 400 target_refused", tc.slug, tc.body, missing, inside)
		}
	}
}

// http-headers answers (and caches) a bounded set of headers, and a
// response whose header is too large to read answers ok false, saying so.
func TestHTTPHeadersAnswersBoundedHeaders(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	site := serveTestSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/many": // under 64 KiB in all
			for i := range 10 {
				w.Header().Add(fmt.Sprintf("X-Long-%d", i), strings.Repeat("v", 3000))
			}
			for i := range 300 {
				w.Header().Add(fmt.Sprintf("X-Many-%03d", i), "v")
			}
		case "/huge":
			w.Header().Set("X-Padding", strings.Repeat("x", 1<<20))
		}
	}))
	var got struct {
		OK     bool `json:"ok"`
		Result struct {
			Headers    map[string][]string `json:"headers"`
			HeadersCut bool                `json:"headers_cut"`
			Error      string              `json:"error"`
		} `json:"result"`
	}
	w := env.request("POST", "/api/tools/http-headers", fmt.Sprintf(`{"url":%q}`, site+"/many"))
	json.Unmarshal(w.Body.Bytes(), &got)
	values, longest := 0, 0
	for _, vs := range got.Result.Headers {
		for _, v := range vs {
			values, longest = values+1, max(longest, len(v))
		}
	}
	if w.Code != 200 || !got.OK || values != 100 || longest != 1024 || !got.Result.HeadersCut || w.Body.Len() > 200<<10 {
		t.Errorf("http-headers = %d, ok %v, %d values, the longest %d bytes, headers_cut %v, %d bytes in all; want 100 values of at most 1,024 bytes, cut",
			w.Code, got.OK, values, longest, got.Result.HeadersCut, w.Body.Len())
	}

	w = env.request("POST", "/api/tools/http-headers", fmt.Sprintf(`{"url":%q}`, site+"/huge"))
	got.OK, got.Result.Error = true, ""
	json.Unmarshal(w.Body.Bytes(), &got)
	if w.Code != 200 || got.OK || !strings.Contains(got.Result.Error, "headers exceeded 65536 bytes") || w.Body.Len() > 10<<10 {
		t.Errorf("http-headers of a 1 MiB header = %d, ok %v, error %.200q, %d bytes in all; want ok false saying the headers are too large",
			w.Code, got.OK, got.Result.Error, w.Body.Len())
	}
}
