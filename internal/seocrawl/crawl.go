// Package seocrawl is the crawler behind the seo-crawl free tool: from a
// start URL it crawls one site breadth first, the way a search engine
// would see it, and reports per page what an SEO audit looks at (status,
// redirects, title, description, canonical, headings, words, links) and
// findings across pages (missing and duplicate titles and descriptions,
// broken internal links, redirect chains, non-canonical duplicates, slow
// pages).
//
// The crawl stays on the start URL's host (and its "www." twin when the
// start page redirects there), obeys robots.txt as user agent "domaind" (RFC 9309), fetches each
// URL at most once, and sends every request, redirects included, through
// a *fetch.Client so that it cannot be turned against the service's own
// network.
package seocrawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/domaind/domaind/internal/fetch"
)

// Defaults and limits of Options.
const (
	DefaultMaxPages     = 25
	MaxPagesLimit       = 100
	DefaultMaxDepth     = 3
	DefaultConcurrency  = 4
	DefaultPageTimeout  = 10 * time.Second
	DefaultMaxPageBytes = 1 << 20
	DefaultSlowAfter    = 2 * time.Second
)

// Bounds of what a crawl keeps, so that its memory and its report stay
// small whatever the pages hold (a page of a mebibyte may carry 45,000
// links).
const (
	// MaxLinksPerPage is how many distinct links of a page, the first
	// ones, are followed and counted.
	MaxLinksPerPage = 1000
	// MaxListed is how many URLs the report lists as robots.txt forbids
	// (the first by URL).
	MaxListed = 100
)

// maxRedirects is how many redirects of one page are followed.
const maxRedirects = 5

// userAgent is sent with every request; its product token is robotsAgent.
const userAgent = "domaind/1 (seo-crawl; +https://github.com/domaind/domaind)"

// Options bound a crawl; zero values take the defaults.
type Options struct {
	MaxPages     int           // pages fetched, at most MaxPagesLimit
	MaxDepth     int           // links followed from the start page (depth 0)
	Concurrency  int           // pages fetched at once
	PageTimeout  time.Duration // per page, its redirects included
	MaxPageBytes int64         // bytes of HTML read per page
	SlowAfter    time.Duration // a page slower than this is a slow page
}

func (o Options) withDefaults() Options {
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	o.MaxPages = min(o.MaxPages, MaxPagesLimit)
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.PageTimeout <= 0 {
		o.PageTimeout = DefaultPageTimeout
	}
	if o.MaxPageBytes <= 0 {
		o.MaxPageBytes = DefaultMaxPageBytes
	}
	if o.SlowAfter <= 0 {
		o.SlowAfter = DefaultSlowAfter
	}
	return o
}

// Progress is told how many pages are done and how many are planned.
// Planned grows as links are found, never above MaxPages; calls come from
// one goroutine, with done and planned never decreasing.
type Progress func(done, planned int)

// Crawl crawls the site of start and reports on it. It fails only when
// start cannot be crawled at all: the guard refuses it (the
// *fetch.BlockedError of c.Check, unchanged, or its resolution error) or
// ctx ends before the crawl does. Everything else, a start page answering
// 404 or a robots.txt that forbids it included, is in the report.
func Crawl(ctx context.Context, c *fetch.Client, start string, opts Options, progress Progress) (*Report, error) {
	u, err := c.Check(ctx, start)
	if err != nil {
		return nil, err
	}
	if progress == nil {
		progress = func(int, int) {}
	}
	startURL := normalize(u)
	hc := *c.HTTP()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	cr := &crawler{
		client:     c,
		http:       &hc,
		opts:       opts.withDefaults(),
		site:       map[string]bool{startURL.Host: true},
		records:    map[string]*record{},
		robots:     map[string]*robotsEntry{},
		disallowed: map[string]bool{},
		unvisited:  map[string]bool{},
	}

	var pages []*crawled
	if cr.allowed(ctx, startURL) {
		rec, _ := cr.claim(startURL.String())
		level := []*crawled{{depth: 0, rec: rec}}
		progress(0, 1)
		for len(level) > 0 {
			cr.fetchLevel(ctx, level, len(pages), progress)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if level[0].depth == 0 {
				cr.extendSite(level[0].rec)
			}
			for _, p := range level {
				p.outcome = cr.follow(p.rec.url)
			}
			pages = append(pages, level...)
			level = cr.nextLevel(ctx, level, len(pages))
			if len(level) > 0 {
				progress(len(pages), len(pages)+len(level))
			}
		}
	} else {
		cr.disallowed[startURL.String()] = true
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return cr.report(startURL.String(), pages), nil
}

// crawler is the state of one crawl.
type crawler struct {
	client *fetch.Client
	http   *http.Client // the client's guarded *http.Client, redirects left to the crawler
	opts   Options
	// site holds the hosts crawled as the site: the start URL's, and its
	// "www." twin when the start page redirects there. Written only
	// between levels.
	site map[string]bool

	mu         sync.Mutex
	records    map[string]*record      // every URL fetched or about to be, by normalized URL
	robots     map[string]*robotsEntry // by origin
	disallowed map[string]bool         // URLs robots.txt kept the crawler from
	unvisited  map[string]bool         // internal URLs left out by MaxPages or MaxDepth
}

// record is one URL's answer, redirects not followed.
type record struct {
	url         string
	status      int
	location    string // normalized target of a redirect, "" when not one
	contentType string
	elapsed     time.Duration
	truncated   bool
	doc         *document // for a 2xx HTML page of the site
	err         string    // why there is no (complete) answer
	disallowed  bool      // robots.txt forbids it; not fetched
}

// crawled is a page of the crawl: a URL scheduled at a depth, and what it
// came to after its redirects.
type crawled struct {
	depth int
	rec   *record
	outcome
}

// claim reserves u for fetching; false when it already is reserved or
// fetched.
func (cr *crawler) claim(u string) (*record, bool) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if _, ok := cr.records[u]; ok {
		return nil, false
	}
	rec := &record{url: u}
	cr.records[u] = rec
	return rec, true
}

// fetchLevel fetches the pages of one level, Concurrency at a time, and
// reports progress as each is done; done is how many were before.
func (cr *crawler) fetchLevel(ctx context.Context, level []*crawled, done int, progress Progress) {
	jobs := make(chan *crawled, len(level))
	for _, p := range level {
		jobs <- p
	}
	close(jobs)
	finished := make(chan struct{}, len(level))
	var wg sync.WaitGroup
	for range min(cr.opts.Concurrency, len(level)) {
		wg.Go(func() {
			for p := range jobs {
				cr.fetchPage(ctx, p)
				finished <- struct{}{}
			}
		})
	}
	planned := done + len(level)
	for range level {
		<-finished
		done++
		progress(done, planned)
	}
	wg.Wait()
}

// fetchPage fetches p and follows its redirects, each target checked by
// the guard and, on the site, by robots.txt. A target that is already
// claimed is left to its own fetch: follow joins the chains afterwards.
// Redirects of the start page stay on the site wherever they go; others
// may leave it, and what they lead to there is fetched but not read.
func (cr *crawler) fetchPage(ctx context.Context, p *crawled) {
	pageCtx, cancel := context.WithTimeout(ctx, cr.opts.PageTimeout)
	defer cancel()
	rec, onSite := p.rec, true
	for hops := 0; ; hops++ {
		cr.fetchRecord(pageCtx, rec, onSite)
		if rec.location == "" || hops == maxRedirects {
			return
		}
		next, err := url.Parse(rec.location)
		onSite = err == nil && isWeb(next) && (p.depth == 0 || cr.site[next.Host])
		if onSite && !cr.allowed(ctx, next) {
			cr.mu.Lock()
			if _, ok := cr.records[rec.location]; !ok {
				cr.records[rec.location] = &record{url: rec.location, disallowed: true}
			}
			cr.disallowed[rec.location] = true
			cr.mu.Unlock()
			return
		}
		var ok bool
		if rec, ok = cr.claim(rec.location); !ok {
			return
		}
	}
}

// fetchRecord sends one GET for rec.url and fills rec in. The body is
// read only for a 2xx HTML page of the site (or one with no Content-Type,
// to sniff it), up to MaxPageBytes.
func (cr *crawler) fetchRecord(ctx context.Context, rec *record, onSite bool) {
	started := time.Now()
	res, err := cr.get(ctx, rec.url, cr.opts.MaxPageBytes, func(status int, contentType string) bool {
		return onSite && status/100 == 2 && (contentType == "" || isHTML(contentType))
	})
	rec.elapsed = time.Since(started)
	if res != nil {
		rec.status, rec.location, rec.contentType, rec.truncated = res.status, res.location, res.contentType, res.truncated
		if res.body != nil && rec.contentType == "" {
			rec.contentType = http.DetectContentType(res.body)
		}
		if res.body != nil && isHTML(rec.contentType) {
			rec.doc = parseDocument(res.body, res.url)
		}
	}
	if err != nil {
		rec.err = describe(err, cr.opts.PageTimeout)
	}
}

// response is one answer, redirects not followed.
type response struct {
	url         *url.URL // as the guard parsed it
	status      int
	location    string // normalized absolute target of a redirect
	contentType string
	body        []byte // nil when not read
	truncated   bool   // the body had more than was read
}

// get sends one GET for raw through the guard without following
// redirects, and reads at most limit bytes of the body when read says so.
// A response comes back with an error when its body could not be read
// whole.
func (cr *crawler) get(ctx context.Context, raw string, limit int64, read func(status int, contentType string) bool) (*response, error) {
	u, err := cr.client.Check(ctx, raw)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	res, err := cr.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out := &response{url: u, status: res.StatusCode, contentType: res.Header.Get("Content-Type")}
	if loc := res.Header.Get("Location"); loc != "" && isRedirect(res.StatusCode) {
		if target, ok := resolve(u, loc); ok {
			out.location = target.String()
		} else if target, err := u.Parse(loc); err == nil {
			out.location = target.String() // not http(s): the guard will say so
		}
	}
	if out.location == "" && read(out.status, out.contentType) {
		out.body, err = io.ReadAll(io.LimitReader(res.Body, limit+1))
		if int64(len(out.body)) > limit {
			out.body, out.truncated = out.body[:limit], true
		}
	} else {
		// A little is drained, so that a short body (a redirect's) leaves
		// the connection reusable.
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
	}
	return out, err
}

// isRedirect reports whether status sends the client to its Location.
func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// describe is the text a report shows for a failed fetch.
func describe(err error, timeout time.Duration) string {
	var blocked *fetch.BlockedError
	var uerr *url.Error
	switch {
	case errors.As(err, &blocked):
		return blocked.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timed out after %s", timeout)
	case errors.As(err, &uerr):
		return uerr.Err.Error()
	}
	return err.Error()
}

// extendSite makes the host the start page's redirects end on part of the
// site when it is the same host name give or take "www." (http://example.com/
// moving to https://www.example.com:8443/ is one site; a move to another
// name is not followed further).
func (cr *crawler) extendSite(start *record) {
	o := cr.follow(start.url)
	if o.Error != "" {
		return
	}
	from, err1 := url.Parse(start.url)
	to, err2 := url.Parse(o.FinalURL)
	if err1 == nil && err2 == nil && bareHost(from) == bareHost(to) {
		cr.site[to.Host] = true
	}
}

// bareHost is u's host name without port and without a leading "www.".
func bareHost(u *url.URL) string { return strings.TrimPrefix(u.Hostname(), "www.") }

// nextLevel schedules, in the order they were found, the internal links
// of level's pages that are new, allowed by robots.txt and within
// MaxDepth and MaxPages (done pages are crawled already). It runs between
// levels, when no fetch is under way.
func (cr *crawler) nextLevel(ctx context.Context, level []*crawled, done int) []*crawled {
	var next []*crawled
	depth := level[0].depth + 1
	for _, p := range level {
		if p.final == nil || p.final.doc == nil {
			continue
		}
		for _, link := range p.final.doc.links {
			key := link.String()
			if !cr.site[link.Host] || cr.records[key] != nil || cr.disallowed[key] || cr.unvisited[key] {
				continue
			}
			if !cr.allowed(ctx, link) {
				cr.disallowed[key] = true
				continue
			}
			if depth > cr.opts.MaxDepth || done+len(next) >= cr.opts.MaxPages {
				cr.unvisited[key] = true
				continue
			}
			rec, _ := cr.claim(key)
			next = append(next, &crawled{depth: depth, rec: rec})
		}
	}
	return next
}

// robotsEntry is the robots.txt of one origin, fetched once.
type robotsEntry struct {
	ready chan struct{} // closed when rules and file are set
	rules *robotsRules
	file  RobotsTxt
}

// allowed reports whether robots.txt lets the crawler fetch u, fetching
// the robots.txt of u's origin the first time it is needed.
func (cr *crawler) allowed(ctx context.Context, u *url.URL) bool {
	o := origin(u)
	cr.mu.Lock()
	e, ok := cr.robots[o]
	if !ok {
		e = &robotsEntry{ready: make(chan struct{})}
		cr.robots[o] = e
	}
	cr.mu.Unlock()
	if ok {
		<-e.ready
	} else {
		e.rules, e.file = cr.fetchRobots(ctx, o)
		close(e.ready)
	}
	return e.rules.allowed(pathQuery(u))
}

// fetchRobots fetches origin's robots.txt, following up to maxRedirects
// redirects, each checked by the guard.
func (cr *crawler) fetchRobots(ctx context.Context, origin string) (*robotsRules, RobotsTxt) {
	ctx, cancel := context.WithTimeout(ctx, cr.opts.PageTimeout)
	defer cancel()
	file := RobotsTxt{URL: origin + "/robots.txt"}
	target := file.URL
	for hops := 0; ; hops++ {
		res, err := cr.get(ctx, target, robotsMaxBytes, func(status int, _ string) bool { return status/100 == 2 })
		if err != nil {
			file.Error = describe(err, cr.opts.PageTimeout)
			return disallowAll, file
		}
		file.Status = res.status
		if res.location == "" || hops == maxRedirects {
			return robotsForStatus(res.status, res.body), file
		}
		target = res.location
	}
}
