package seocrawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fetch"
)

// testSite is a web site served from a table of handlers by path, counting
// the requests of each path. Unknown paths answer 404.
type testSite struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newSite(tb testing.TB, ip string, handlers map[string]http.HandlerFunc) *testSite {
	tb.Helper()
	s := &testSite{hits: map[string]int{}}
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		tb.Fatal(err)
	}
	s.Server = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		if h, ok := handlers[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	})}}
	s.Start()
	tb.Cleanup(s.Close)
	return s
}

func (s *testSite) url(path string) string { return s.URL + path }

func (s *testSite) hitCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for p, n := range s.hits {
		out[p] = n
	}
	return out
}

// htmlPage answers an HTML page; each link is an <a> with the text "link".
func htmlPage(title, description, canonical, body string, links ...string) http.HandlerFunc {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head>")
	if title != "" {
		fmt.Fprintf(&b, "<title>%s</title>", title)
	}
	if description != "" {
		fmt.Fprintf(&b, `<meta name="description" content="%s">`, description)
	}
	if canonical != "" {
		fmt.Fprintf(&b, `<link rel="canonical" href="%s">`, canonical)
	}
	b.WriteString("</head><body>" + body)
	for _, l := range links {
		fmt.Fprintf(&b, `<a href="%s">link</a>`, l)
	}
	b.WriteString("</body></html>")
	page := b.String()
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}
}

func redirectTo(status int, location string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", location)
		w.WriteHeader(status)
	}
}

func statusOnly(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Error(w, http.StatusText(status), status) }
}

func robotsTxt(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, body)
	}
}

// localClient is a guarded fetch client that may reach loopback (the test
// servers) and nothing else private.
func localClient() *fetch.Client {
	return fetch.New(fetch.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
}

// jsonEqual compares want and got as the JSON a caller receives.
func jsonEqual(tb testing.TB, what string, want, got any) {
	tb.Helper()
	w, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	g, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	if string(w) != string(g) {
		tb.Errorf("%s mismatch\nwant: %s\ngot:  %s", what, w, g)
	}
}

func TestCrawlSite(t *testing.T) {
	aBody := "<h1>A</h1><p>Shared words of a</p>"
	homeLinks := []string{
		"/a", "/b", "/nodesc", "/old", "/canon", "/copy1", "/copy2", "/missing", "/loop", "/deep1",
		"/private/secret", "/to-private", "https://external.example/x",
		"#top", "mailto:someone@example.com", "/a#frag", "/b?",
	}
	handlers := map[string]http.HandlerFunc{
		"/robots.txt":     robotsTxt("User-agent: otherbot\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n"),
		"/":               htmlPage("Home", "The home page", "", "<h1>Welcome</h1><p>Hello there, visitor.</p>", homeLinks...),
		"/a":              htmlPage("Same title", "A page", "", aBody, "/broken500", "/missing"),
		"/b":              htmlPage("Same title", "B page", "", "<p>Bee</p>", "/", "/new"),
		"/nodesc":         htmlPage("", "", "", "<p>Nothing here</p>"),
		"/old":            redirectTo(http.StatusMovedPermanently, "older"),
		"/older":          redirectTo(http.StatusFound, "/new"),
		"/new":            htmlPage("New", "New page", "", "<h1>New</h1>", "/a"),
		"/canon":          htmlPage("Same title", "A page", "/a", aBody, "/broken500", "/missing"),
		"/copy1":          htmlPage("Copy", "Copy desc", "", "<p>Same words</p>"),
		"/copy2":          htmlPage("Copy", "Copy desc", "", "<p>Same words</p>"),
		"/missing":        statusOnly(http.StatusNotFound),
		"/broken500":      statusOnly(http.StatusInternalServerError),
		"/loop":           htmlPage("Loop", "Loops", "", "<p>Round</p>", "/loop", "/", "/loop#again"),
		"/deep1":          htmlPage("Deep 1", "Deep 1", "", "", "/deep2"),
		"/deep2":          htmlPage("Deep 2", "Deep 2", "", "", "/deep3"),
		"/deep3":          htmlPage("Deep 3", "Deep 3", "", "", "/deep4"),
		"/deep4":          htmlPage("Deep 4", "Deep 4", "", ""),
		"/private/secret": htmlPage("Secret", "Secret", "", ""),
		"/to-private":     redirectTo(http.StatusFound, "/private/x"),
	}
	site := newSite(t, "127.0.0.1", handlers)
	u := site.url

	r, err := Crawl(context.Background(), localClient(), site.URL, Options{SlowAfter: 1 << 62}, nil)
	if err != nil {
		t.Fatal(err)
	}

	wantHits := map[string]int{"/robots.txt": 1}
	for _, p := range []string{
		"/", "/a", "/b", "/nodesc", "/old", "/older", "/new", "/canon", "/copy1", "/copy2", "/missing",
		"/loop", "/deep1", "/to-private", "/broken500", "/deep2", "/deep3",
	} {
		wantHits[p] = 1
	}
	jsonEqual(t, "requests per path", wantHits, site.hitCounts())

	var order []string
	for _, p := range r.Pages {
		order = append(order, fmt.Sprintf("%d %s", p.Depth, strings.TrimPrefix(p.URL, site.URL)))
	}
	jsonEqual(t, "pages in crawl order", []string{
		"0 /", "1 /a", "1 /b", "1 /nodesc", "1 /old", "1 /canon", "1 /copy1", "1 /copy2", "1 /missing",
		"1 /loop", "1 /deep1", "1 /to-private", "2 /broken500", "2 /deep2", "3 /deep3",
	}, order)

	pages := map[string]Page{}
	for _, p := range r.Pages {
		if p.ResponseMS < 0 {
			t.Errorf("%s: response_ms %d", p.URL, p.ResponseMS)
		}
		p.ResponseMS = 0
		pages[p.URL] = p
	}
	html := "text/html; charset=utf-8"
	jsonEqual(t, "start page", Page{
		URL: u("/"), FinalURL: u("/"), Status: 200, Redirects: []Redirect{}, ContentType: html,
		Title: "Home", MetaDescription: "The home page", H1Count: 1, WordCount: 4 + len(homeLinks),
		InternalLinks: 12, ExternalLinks: 1,
	}, pages[u("/")])
	jsonEqual(t, "redirected page", Page{
		URL: u("/old"), FinalURL: u("/new"), Status: 200,
		Redirects:   []Redirect{{URL: u("/old"), Status: 301}, {URL: u("/older"), Status: 302}},
		ContentType: html, Title: "New", MetaDescription: "New page", H1Count: 1, WordCount: 2,
		InternalLinks: 1, Depth: 1,
	}, pages[u("/old")])
	jsonEqual(t, "page with a canonical", Page{
		URL: u("/canon"), FinalURL: u("/canon"), Status: 200, Redirects: []Redirect{}, ContentType: html,
		Title: "Same title", MetaDescription: "A page", Canonical: u("/a"), H1Count: 1, WordCount: 7,
		InternalLinks: 2, Depth: 1,
	}, pages[u("/canon")])
	jsonEqual(t, "missing page", Page{
		URL: u("/missing"), FinalURL: u("/missing"), Status: 404, Redirects: []Redirect{},
		ContentType: "text/plain; charset=utf-8", Depth: 1,
	}, pages[u("/missing")])
	jsonEqual(t, "redirect into a disallowed path", Page{
		URL: u("/to-private"), FinalURL: u("/private/x"), Redirects: []Redirect{{URL: u("/to-private"), Status: 302}},
		Depth: 1, Error: "disallowed by robots.txt",
	}, pages[u("/to-private")])

	jsonEqual(t, "summary", Summary{
		PagesCrawled:     15,
		PagesNotCrawled:  1, // /deep4
		RobotsDisallowed: []string{u("/private/secret"), u("/private/x")},
		RobotsTxt:        []RobotsTxt{{URL: u("/robots.txt"), Status: 200}},
		Findings: Findings{
			MissingTitles: []string{u("/nodesc")},
			DuplicateTitles: []DuplicateTitle{
				{Title: "Copy", URLs: []string{u("/copy1"), u("/copy2")}},
				{Title: "Same title", URLs: []string{u("/a"), u("/b")}},
			},
			MissingDescriptions: []string{u("/nodesc")},
			DuplicateDescriptions: []DuplicateDescription{
				{Description: "Copy desc", URLs: []string{u("/copy1"), u("/copy2")}},
			},
			BrokenLinks: []BrokenLink{
				{URL: u("/broken500"), Status: 500, LinkedFrom: []string{u("/a"), u("/canon")}},
				{URL: u("/missing"), Status: 404, LinkedFrom: []string{u("/"), u("/a"), u("/canon")}},
			},
			RedirectChains: []RedirectChain{{From: u("/old"), To: u("/new"), Hops: 2}},
			NonCanonicalDuplicates: []CanonicalGroup{
				{Canonical: "", URLs: []string{u("/copy1"), u("/copy2")}},
				{Canonical: u("/a"), URLs: []string{u("/canon")}},
			},
			SlowPages: []SlowPage{},
		},
	}, r.Summary)
}

func TestCrawlMaxPagesAndProgress(t *testing.T) {
	// A tree: /p/n links to /p/3n+1 .. /p/3n+3, so breadth first is /p/0, /p/1, ...
	handlers := map[string]http.HandlerFunc{}
	for n := range 40 {
		handlers[fmt.Sprintf("/p/%d", n)] = htmlPage(fmt.Sprintf("Page %d", n), "d", "", "",
			fmt.Sprintf("/p/%d", 3*n+1), fmt.Sprintf("/p/%d", 3*n+2), fmt.Sprintf("/p/%d", 3*n+3))
	}
	site := newSite(t, "127.0.0.1", handlers)

	type call struct{ done, planned int }
	var calls []call
	r, err := Crawl(context.Background(), localClient(), site.url("/p/0"), Options{MaxPages: 10, MaxDepth: 10, Concurrency: 3},
		func(done, planned int) { calls = append(calls, call{done, planned}) })
	if err != nil {
		t.Fatal(err)
	}

	wantHits := map[string]int{"/robots.txt": 1}
	var wantPages []string
	for n := range 10 {
		wantHits[fmt.Sprintf("/p/%d", n)] = 1
		wantPages = append(wantPages, site.url(fmt.Sprintf("/p/%d", n)))
	}
	jsonEqual(t, "requests per path", wantHits, site.hitCounts())
	var gotPages []string
	for _, p := range r.Pages {
		gotPages = append(gotPages, p.URL)
	}
	jsonEqual(t, "pages", wantPages, gotPages)
	if r.Summary.PagesCrawled != 10 || r.Summary.PagesNotCrawled != 21 { // /p/10 .. /p/30 were found
		t.Errorf("pages crawled %d, not crawled %d; want 10, 21", r.Summary.PagesCrawled, r.Summary.PagesNotCrawled)
	}

	if len(calls) == 0 || calls[0] != (call{0, 1}) {
		t.Fatalf("progress starts with %v, want {0 1}", calls[:min(1, len(calls))])
	}
	var doneSeen []int
	for i, c := range calls {
		if c.planned > 10 || c.done > c.planned {
			t.Errorf("progress call %d = %+v: beyond MaxPages or done > planned", i, c)
		}
		if i > 0 && (c.done < calls[i-1].done || c.planned < calls[i-1].planned) {
			t.Errorf("progress call %d = %+v goes back from %+v", i, c, calls[i-1])
		}
		if i > 0 && c.done > calls[i-1].done {
			doneSeen = append(doneSeen, c.done)
		}
	}
	jsonEqual(t, "done as reported", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, doneSeen)
	if last := calls[len(calls)-1]; last != (call{10, 10}) {
		t.Errorf("last progress = %+v, want {10 10}", last)
	}
}

// A page of many links costs a bounded crawl: the first MaxLinksPerPage
// are followed and counted, and the report lists at most MaxListed URLs
// robots.txt forbids. (A page of a mebibyte of links made a crawl of
// 100 such pages hold 2 GB and report 4 million forbidden URLs.)
func TestCrawlKeepsABoundedShareOfManyLinks(t *testing.T) {
	var links []string
	for n := range 3 * MaxLinksPerPage {
		links = append(links, fmt.Sprintf("/x/%d", n))
	}
	site := newSite(t, "127.0.0.1", map[string]http.HandlerFunc{
		"/robots.txt": robotsTxt("User-agent: *\nDisallow: /x/\n"),
		"/":           htmlPage("Many links", "d", "", "", links...),
	})
	r, err := Crawl(context.Background(), localClient(), site.url("/"), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Pages[0]; p.InternalLinks != MaxLinksPerPage {
		t.Errorf("the page counts %d internal links, want the first %d", p.InternalLinks, MaxLinksPerPage)
	}
	if got := r.Summary.RobotsDisallowed; len(got) != MaxListed || got[0] != site.url("/x/0") {
		t.Errorf("the report lists %d forbidden URLs from %v, want the first %d by URL", len(got), got[:min(1, len(got))], MaxListed)
	}
}

// metadataDNS answers metadata.test with the cloud metadata address.
type metadataDNS struct{}

func (metadataDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "metadata.test" {
		return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func TestCrawlRefusesRedirectsIntoPrivateNetworks(t *testing.T) {
	site := newSite(t, "127.0.0.1", map[string]http.HandlerFunc{
		"/":         htmlPage("Home", "Home", "", "", "/private", "/metadata", "/by-name"),
		"/private":  redirectTo(http.StatusFound, "http://10.0.0.1/"),
		"/metadata": redirectTo(http.StatusMovedPermanently, "http://169.254.169.254/latest/meta-data/"),
		"/by-name":  redirectTo(http.StatusFound, "http://metadata.test/latest/meta-data/"),
	})
	c := fetch.New(fetch.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Resolver: metadataDNS{}})
	r, err := Crawl(context.Background(), c, site.URL, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ final, reason string }{
		site.url("/private"):  {"http://10.0.0.1/", "private"},
		site.url("/metadata"): {"http://169.254.169.254/latest/meta-data/", "link-local"},
		site.url("/by-name"):  {"http://metadata.test/latest/meta-data/", "link-local"},
	}
	var broken []string
	for _, b := range r.Summary.Findings.BrokenLinks {
		broken = append(broken, b.URL)
	}
	jsonEqual(t, "broken links", []string{site.url("/by-name"), site.url("/metadata"), site.url("/private")}, broken)
	for _, p := range r.Pages[1:] {
		w := want[p.URL]
		if p.FinalURL != w.final || p.Status != 0 || len(p.Redirects) != 1 ||
			!strings.HasPrefix(p.Error, "refused to fetch "+w.final) || !strings.Contains(p.Error, w.reason) {
			t.Errorf("%s: final %s, status %d, redirects %v, error %q; want the redirect to %s refused as %s",
				p.URL, p.FinalURL, p.Status, p.Redirects, p.Error, w.final, w.reason)
		}
	}
	if len(r.Pages) != 4 {
		t.Errorf("%d pages, want 4", len(r.Pages))
	}
}

func TestCrawlStartRefused(t *testing.T) {
	for _, start := range []string{"http://10.1.2.3/", "http://127.0.0.1/", "http://169.254.169.254/", "file:///etc/passwd"} {
		r, err := Crawl(context.Background(), fetch.New(fetch.Options{}), start, Options{}, nil)
		if _, ok := err.(*fetch.BlockedError); !ok || r != nil {
			t.Errorf("Crawl(%s) = %v, %v; want a *fetch.BlockedError", start, r, err)
		}
	}
}

func TestCrawlStartPage404IsAReport(t *testing.T) {
	site := newSite(t, "127.0.0.1", nil)
	r, err := Crawl(context.Background(), localClient(), site.url("/nothing"), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Pages) != 1 || r.Pages[0].Status != 404 || r.Pages[0].Error != "" {
		t.Fatalf("pages = %+v, want the start page with status 404", r.Pages)
	}
	jsonEqual(t, "robots.txt", []RobotsTxt{{URL: site.url("/robots.txt"), Status: 404}}, r.Summary.RobotsTxt)
	jsonEqual(t, "broken links", []BrokenLink{}, r.Summary.Findings.BrokenLinks)
}

func TestCrawlUnreachableRobotsDisallowsAll(t *testing.T) {
	tests := []struct {
		name   string
		robots http.HandlerFunc
		want   RobotsTxt // URL filled in below
	}{
		{"5xx", statusOnly(http.StatusServiceUnavailable), RobotsTxt{Status: 503}},
		{"redirect refused by the guard", redirectTo(http.StatusFound, "http://10.0.0.1/robots.txt"),
			RobotsTxt{Status: 302, Error: "refused to fetch http://10.0.0.1/robots.txt: 10.0.0.1 resolves to a private address"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := newSite(t, "127.0.0.1", map[string]http.HandlerFunc{
				"/robots.txt": tt.robots,
				"/":           htmlPage("Home", "Home", "", ""),
			})
			r, err := Crawl(context.Background(), localClient(), site.URL, Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tt.want.URL = site.url("/robots.txt")
			jsonEqual(t, "robots.txt", []RobotsTxt{tt.want}, r.Summary.RobotsTxt)
			jsonEqual(t, "disallowed", []string{site.url("/")}, r.Summary.RobotsDisallowed)
			if len(r.Pages) != 0 || site.hitCounts()["/"] != 0 {
				t.Errorf("the start page was fetched: %+v", r.Pages)
			}
		})
	}
}

func TestCrawlReadsAtMostMaxPageBytes(t *testing.T) {
	const head = "<html><head><title>Huge</title></head><body>"
	const chunk = 64 << 10
	const total = 256 << 20
	var written int64
	site := newSite(t, "127.0.0.1", map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			n, err := fmt.Fprint(w, head)
			written = int64(n)
			words := []byte(strings.Repeat("word ", chunk/5))
			for err == nil && written < total {
				n, err = w.Write(words)
				written += int64(n)
			}
		},
	})
	const limit = 1000
	r, err := Crawl(context.Background(), localClient(), site.URL, Options{MaxPageBytes: limit}, nil)
	if err != nil {
		t.Fatal(err)
	}
	site.Close() // waits for the handler, which stops once the crawler hangs up
	p := r.Pages[0]
	wantWords := len(strings.Fields(strings.Repeat("word ", limit)[:limit-len(head)]))
	if !p.Truncated || p.Title != "Huge" || p.WordCount != wantWords || p.Error != "" {
		t.Errorf("page = %+v; want truncated, title Huge and %d words", p, wantWords)
	}
	if written > total/4 {
		t.Errorf("server wrote %d bytes before the crawler hung up; it reads %d", written, limit)
	}
}

func TestCrawlRedirectLimits(t *testing.T) {
	handlers := map[string]http.HandlerFunc{
		"/":   htmlPage("Home", "Home", "", "", "/r1", "/g0", "/h0"),
		"/r1": redirectTo(http.StatusFound, "/r2"),
		"/r2": redirectTo(http.StatusFound, "/r1"),
		"/g5": htmlPage("G", "G", "", ""),
		"/h6": htmlPage("H", "H", "", ""),
	}
	for i := range 5 {
		handlers[fmt.Sprintf("/g%d", i)] = redirectTo(http.StatusMovedPermanently, fmt.Sprintf("/g%d", i+1))
	}
	for i := range 6 {
		handlers[fmt.Sprintf("/h%d", i)] = redirectTo(http.StatusMovedPermanently, fmt.Sprintf("/h%d", i+1))
	}
	site := newSite(t, "127.0.0.1", handlers)
	r, err := Crawl(context.Background(), localClient(), site.URL, Options{SlowAfter: 1 << 62}, nil)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		Final string
		Hops  int
		Error string
	}
	got := map[string]result{}
	for _, p := range r.Pages[1:] {
		got[strings.TrimPrefix(p.URL, site.URL)] = result{strings.TrimPrefix(p.FinalURL, site.URL), len(p.Redirects), p.Error}
	}
	jsonEqual(t, "pages", map[string]result{
		"/r1": {"/r2", 2, "redirect loop"},
		"/g0": {"/g5", 5, ""},
		"/h0": {"/h5", 5, "more than 5 redirects"},
	}, got)
	hits := site.hitCounts()
	for _, p := range []string{"/r1", "/r2", "/g0", "/g5", "/h0", "/h5"} {
		if hits[p] != 1 {
			t.Errorf("%s fetched %d times, want once", p, hits[p])
		}
	}
	if hits["/h6"] != 0 {
		t.Error("/h6 fetched past the redirect limit")
	}
	jsonEqual(t, "redirect chains", []RedirectChain{
		{From: site.url("/g0"), To: site.url("/g5"), Hops: 5},
		{From: site.url("/h0"), To: site.url("/h5"), Hops: 5},
		{From: site.url("/r1"), To: site.url("/r2"), Hops: 2},
	}, r.Summary.Findings.RedirectChains)
}

// namesDNS resolves the test's host names to loopback addresses.
type namesDNS map[string]string

func (d namesDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := d[strings.TrimSuffix(host, ".")]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// named is site's URL for path under the host name name.
func named(site *testSite, name, path string) string {
	return "http://" + name + ":" + site.URL[strings.LastIndexByte(site.URL, ':')+1:] + path
}

func TestCrawlStartRedirectToWWWExtendsSite(t *testing.T) {
	// site.test redirects to www.site.test, which is then the site too.
	var www *testSite
	start := newSite(t, "127.0.0.1", map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			redirectTo(http.StatusMovedPermanently, named(www, "www.site.test", "/home"))(w, r)
		},
		"/first": htmlPage("First", "First", "", ""),
	})
	www = newSite(t, "127.0.0.2", map[string]http.HandlerFunc{
		"/robots.txt": robotsTxt("User-agent: *\nDisallow: /no\n"),
		"/home":       htmlPage("Home", "Home", "", "", "/about", "/no", named(start, "site.test", "/first"), "http://127.0.0.3/elsewhere"),
		"/about":      htmlPage("About", "About", "", ""),
	})
	client := fetch.New(fetch.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver: namesDNS{"site.test": "127.0.0.1", "www.site.test": "127.0.0.2"}})
	r, err := Crawl(context.Background(), client, named(start, "site.test", "/"), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, p := range r.Pages {
		urls = append(urls, p.URL)
	}
	jsonEqual(t, "pages", []string{named(start, "site.test", "/"), named(www, "www.site.test", "/about"), named(start, "site.test", "/first")}, urls)
	jsonEqual(t, "disallowed", []string{named(www, "www.site.test", "/no")}, r.Summary.RobotsDisallowed)
	if p := r.Pages[0]; p.FinalURL != named(www, "www.site.test", "/home") || p.InternalLinks != 3 || p.ExternalLinks != 1 {
		t.Errorf("start page = %+v; want it at www.site.test/home with 3 internal links and 1 external", p)
	}
}

func TestCrawlStartRedirectToAnotherNameIsNotFollowed(t *testing.T) {
	// Same host only: a start page moving to another name is reported, and
	// that name's pages are not crawled.
	var other *testSite
	start := newSite(t, "127.0.0.1", map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			redirectTo(http.StatusMovedPermanently, other.url("/home"))(w, r)
		},
	})
	other = newSite(t, "127.0.0.2", map[string]http.HandlerFunc{
		"/home":  htmlPage("Home", "Home", "", "", "/about"),
		"/about": htmlPage("About", "About", "", ""),
	})
	r, err := Crawl(context.Background(), localClient(), start.URL, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Pages) != 1 || r.Pages[0].FinalURL != other.url("/home") || other.hitCounts()["/about"] != 0 {
		t.Errorf("pages = %+v, /about fetched %d times; want only the start page", r.Pages, other.hitCounts()["/about"])
	}
}

func TestCrawlPageTimeout(t *testing.T) {
	site := newSite(t, "127.0.0.1", map[string]http.HandlerFunc{
		"/":     htmlPage("Home", "Home", "", "", "/hang"),
		"/hang": func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
	})
	r, err := Crawl(context.Background(), localClient(), site.URL, Options{PageTimeout: 300 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, "broken links", []BrokenLink{{URL: site.url("/hang"), Error: "timed out after 300ms", LinkedFrom: []string{site.url("/")}}},
		r.Summary.Findings.BrokenLinks)
}

func TestCrawlSlowPage(t *testing.T) {
	site := newSite(t, "127.0.0.1", map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(30 * time.Millisecond) // sleeps at least that: the assertion is a lower bound
			htmlPage("Slow", "Slow", "", "")(w, r)
		},
	})
	r, err := Crawl(context.Background(), localClient(), site.URL, Options{SlowAfter: 10 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	slow := r.Summary.Findings.SlowPages
	if len(slow) != 1 || slow[0].URL != site.url("/") || slow[0].ResponseMS < 30 {
		t.Errorf("slow pages = %+v; want the start page at 30 ms or more", slow)
	}
}

func TestCrawlCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	site := newSite(t, "127.0.0.1", map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			cancel()
			htmlPage("Home", "Home", "", "", "/a")(w, r)
		},
		"/a": htmlPage("A", "A", "", ""),
	})
	r, err := Crawl(ctx, localClient(), site.URL, Options{}, nil)
	if !errors.Is(err, context.Canceled) || r != nil {
		t.Errorf("Crawl = %v, %v; want context.Canceled", r, err)
	}
}
