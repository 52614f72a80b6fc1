package seocrawl

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Report is what a crawl found. Its lists are sorted (pages in crawl
// order) so that the same site always gives the same report, timings
// aside.
type Report struct {
	StartURL string  `json:"start_url"`
	Pages    []Page  `json:"pages"` // by depth, then in the order found
	Summary  Summary `json:"summary"`
}

// Page is one crawled URL: where its redirects led, what the final answer
// was and what its HTML says. Status is the final answer's (0 when there
// was none); Error says why a page has no complete answer: refused by the
// guard, timed out, connection failed, a redirect loop, more than five
// redirects, or a redirect to a URL robots.txt disallows. HTML fields are
// set for a 2xx HTML page of the site only; link counts are of distinct
// targets, the page itself left out.
type Page struct {
	URL             string     `json:"url"`
	FinalURL        string     `json:"final_url"`
	Status          int        `json:"status"`
	Redirects       []Redirect `json:"redirects"`
	ResponseMS      int64      `json:"response_ms"` // the whole chain, bodies read included
	ContentType     string     `json:"content_type"`
	Title           string     `json:"title"`
	MetaDescription string     `json:"meta_description"`
	Canonical       string     `json:"canonical"` // absolute
	H1Count         int        `json:"h1_count"`
	WordCount       int        `json:"word_count"` // visible text of what was read
	InternalLinks   int        `json:"internal_links"`
	ExternalLinks   int        `json:"external_links"`
	Depth           int        `json:"depth"`               // links from the start page
	Truncated       bool       `json:"truncated,omitempty"` // only the first MaxPageBytes were read
	Error           string     `json:"error,omitempty"`
}

// Redirect is one redirect of a chain: the URL that answered and its status.
type Redirect struct {
	URL    string `json:"url"`
	Status int    `json:"status"`
}

// Summary counts what was crawled and lists the findings.
type Summary struct {
	PagesCrawled int `json:"pages_crawled"`
	// PagesNotCrawled counts internal URLs found but left out by the page
	// or depth limit.
	PagesNotCrawled int `json:"pages_not_crawled"`
	// RobotsDisallowed lists the internal URLs found that robots.txt
	// forbids, the first MaxListed by URL; they were not fetched.
	RobotsDisallowed []string    `json:"robots_disallowed"`
	RobotsTxt        []RobotsTxt `json:"robots_txt"`
	Findings         Findings    `json:"findings"`
}

// RobotsTxt is how a robots.txt answered, after up to five redirects: a
// 2xx is obeyed, a 4xx allows everything, a 5xx or an error forbids
// everything (RFC 9309). Status is the last answer's, 0 when there was
// none.
type RobotsTxt struct {
	URL    string `json:"url"`
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
}

// Findings are the problems found across pages. Title and description
// findings look at the distinct 2xx HTML pages of the site reached (by
// final URL, so a page reached through redirects counts once); the
// duplicate checks leave out pages whose canonical names another URL, as
// those declare themselves copies. NonCanonicalDuplicates has two kinds
// of groups: pages whose canonical names another URL, under that URL; and
// pages with the same title and the same visible text whose canonicals do
// not all name one URL (the duplication is not consolidated), under an
// empty canonical.
type Findings struct {
	MissingTitles          []string               `json:"missing_titles"`
	DuplicateTitles        []DuplicateTitle       `json:"duplicate_titles"`
	MissingDescriptions    []string               `json:"missing_descriptions"`
	DuplicateDescriptions  []DuplicateDescription `json:"duplicate_descriptions"`
	BrokenLinks            []BrokenLink           `json:"broken_links"`
	RedirectChains         []RedirectChain        `json:"redirect_chains"`
	NonCanonicalDuplicates []CanonicalGroup       `json:"non_canonical_duplicates"`
	SlowPages              []SlowPage             `json:"slow_pages"`
}

// DuplicateTitle is a title shared by several pages.
type DuplicateTitle struct {
	Title string   `json:"title"`
	URLs  []string `json:"urls"`
}

// DuplicateDescription is a meta description shared by several pages.
type DuplicateDescription struct {
	Description string   `json:"description"`
	URLs        []string `json:"urls"`
}

// BrokenLink is an internal URL that was fetched and answered 4xx or 5xx
// (after its redirects) or could not be fetched, with the pages linking
// to it. URLs left out by the limits or by robots.txt are never broken.
type BrokenLink struct {
	URL        string   `json:"url"`
	Status     int      `json:"status,omitempty"`
	Error      string   `json:"error,omitempty"`
	LinkedFrom []string `json:"linked_from"`
}

// RedirectChain is a crawled URL that took more than one redirect to
// reach its final URL (a single redirect is not a chain).
type RedirectChain struct {
	From string `json:"from"`
	To   string `json:"to"`
	Hops int    `json:"hops"`
}

// CanonicalGroup is pages that are duplicates of one another or of
// Canonical (see Findings).
type CanonicalGroup struct {
	Canonical string   `json:"canonical"`
	URLs      []string `json:"urls"`
}

// SlowPage is a crawled URL that took longer than Options.SlowAfter.
type SlowPage struct {
	URL        string `json:"url"`
	ResponseMS int64  `json:"response_ms"`
}

// outcome is where a URL leads once its redirects are followed.
type outcome struct {
	Page                     // Depth unset
	final      *record       // the answer that ended the chain, nil when there was none
	elapsed    time.Duration // over the chain
	disallowed bool          // the chain ends on a URL robots.txt forbids
}

// broken reports whether a link to the outcome's URL is a broken link.
func (o *outcome) broken() bool {
	return !o.disallowed && (o.Status >= 400 || o.Error != "")
}

// follow joins the records of u's redirect chain, which may have been
// fetched as parts of different pages, into a page. Call it once the
// records of the chain are filled in.
func (cr *crawler) follow(u string) outcome {
	o := outcome{Page: Page{URL: u, Redirects: []Redirect{}}}
	seen := map[string]bool{}
	for rec := cr.records[u]; rec != nil; rec = cr.records[rec.location] {
		o.FinalURL, o.Status, o.ContentType, o.Truncated = rec.url, rec.status, rec.contentType, rec.truncated
		o.elapsed += rec.elapsed
		if rec.disallowed {
			o.Error, o.disallowed = "disallowed by robots.txt", true
			break
		}
		if rec.err != "" {
			o.Error = rec.err
			break
		}
		if rec.location == "" {
			o.final = rec
			break
		}
		if len(o.Redirects) == maxRedirects {
			o.Error = fmt.Sprintf("more than %d redirects", maxRedirects)
			break
		}
		o.Redirects = append(o.Redirects, Redirect{URL: rec.url, Status: rec.status})
		seen[rec.url] = true
		if seen[rec.location] {
			o.Error = "redirect loop"
			break
		}
	}
	o.ResponseMS = o.elapsed.Milliseconds()
	if o.final == nil || o.final.doc == nil {
		return o
	}
	d := o.final.doc
	o.Title, o.MetaDescription, o.Canonical = d.title, d.description, d.canonical
	o.H1Count, o.WordCount = d.h1, d.words
	for _, l := range d.links {
		if cr.site[l.Host] {
			o.InternalLinks++
		} else {
			o.ExternalLinks++
		}
	}
	return o
}

// report puts the crawled pages and the findings together.
func (cr *crawler) report(start string, pages []*crawled) *Report {
	r := &Report{StartURL: start, Pages: make([]Page, 0, len(pages))}
	for _, p := range pages {
		page := p.Page
		page.Depth = p.depth
		r.Pages = append(r.Pages, page)
	}
	s := &r.Summary
	s.PagesCrawled = len(pages)
	for u := range cr.unvisited {
		if cr.records[u] == nil {
			s.PagesNotCrawled++
		}
	}
	s.RobotsDisallowed = slices.Sorted(maps.Keys(cr.disallowed))
	if s.RobotsDisallowed == nil {
		s.RobotsDisallowed = []string{}
	}
	s.RobotsDisallowed = s.RobotsDisallowed[:min(len(s.RobotsDisallowed), MaxListed)]
	s.RobotsTxt = []RobotsTxt{}
	for _, o := range slices.Sorted(maps.Keys(cr.robots)) {
		s.RobotsTxt = append(s.RobotsTxt, cr.robots[o].file)
	}
	s.Findings = cr.findings(pages)
	return r
}

// findings applies the rules documented on Findings.
func (cr *crawler) findings(pages []*crawled) Findings {
	f := Findings{
		MissingTitles:          []string{},
		DuplicateTitles:        []DuplicateTitle{},
		MissingDescriptions:    []string{},
		DuplicateDescriptions:  []DuplicateDescription{},
		BrokenLinks:            []BrokenLink{},
		RedirectChains:         []RedirectChain{},
		NonCanonicalDuplicates: []CanonicalGroup{},
		SlowPages:              []SlowPage{},
	}
	docs := map[string]*document{}
	for u, rec := range cr.records {
		if rec.doc != nil && rec.err == "" {
			docs[u] = rec.doc
		}
	}
	type content struct {
		title string
		text  uint64
	}
	var (
		titles       = map[string][]string{}
		descriptions = map[string][]string{}
		canonicals   = map[string][]string{} // canonical → pages naming it, not being it
		copies       = map[content][]string{}
		outcomes     = map[string]outcome{}
		broken       = map[string]*BrokenLink{}
	)
	for _, u := range slices.Sorted(maps.Keys(docs)) {
		d := docs[u]
		if d.title == "" {
			f.MissingTitles = append(f.MissingTitles, u)
		}
		if d.description == "" {
			f.MissingDescriptions = append(f.MissingDescriptions, u)
		}
		if d.words > 0 {
			copies[content{d.title, d.text}] = append(copies[content{d.title, d.text}], u)
		}
		if d.canonical != "" && d.canonical != u {
			canonicals[d.canonical] = append(canonicals[d.canonical], u)
		} else {
			if d.title != "" {
				titles[d.title] = append(titles[d.title], u)
			}
			if d.description != "" {
				descriptions[d.description] = append(descriptions[d.description], u)
			}
		}
		for _, l := range d.links {
			target := l.String()
			if !cr.site[l.Host] || cr.records[target] == nil {
				continue
			}
			o, ok := outcomes[target]
			if !ok {
				o = cr.follow(target)
				outcomes[target] = o
			}
			if !o.broken() {
				continue
			}
			if broken[target] == nil {
				broken[target] = &BrokenLink{URL: target, Status: o.Status, Error: o.Error, LinkedFrom: []string{}}
			}
			broken[target].LinkedFrom = append(broken[target].LinkedFrom, u)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(titles)) {
		if len(titles[t]) > 1 {
			f.DuplicateTitles = append(f.DuplicateTitles, DuplicateTitle{Title: t, URLs: titles[t]})
		}
	}
	for _, d := range slices.Sorted(maps.Keys(descriptions)) {
		if len(descriptions[d]) > 1 {
			f.DuplicateDescriptions = append(f.DuplicateDescriptions, DuplicateDescription{Description: d, URLs: descriptions[d]})
		}
	}
	for _, u := range slices.Sorted(maps.Keys(broken)) {
		f.BrokenLinks = append(f.BrokenLinks, *broken[u])
	}
	for c, urls := range canonicals {
		f.NonCanonicalDuplicates = append(f.NonCanonicalDuplicates, CanonicalGroup{Canonical: c, URLs: urls})
	}
	for _, urls := range copies {
		if len(urls) > 1 && !consolidated(urls, docs) {
			f.NonCanonicalDuplicates = append(f.NonCanonicalDuplicates, CanonicalGroup{URLs: urls})
		}
	}
	slices.SortFunc(f.NonCanonicalDuplicates, func(a, b CanonicalGroup) int {
		return cmp.Or(cmp.Compare(a.Canonical, b.Canonical), slices.Compare(a.URLs, b.URLs))
	})
	for _, p := range pages {
		if len(p.Redirects) > 1 {
			f.RedirectChains = append(f.RedirectChains, RedirectChain{From: p.URL, To: p.FinalURL, Hops: len(p.Redirects)})
		}
		if p.elapsed > cr.opts.SlowAfter {
			f.SlowPages = append(f.SlowPages, SlowPage{URL: p.URL, ResponseMS: p.ResponseMS})
		}
	}
	slices.SortFunc(f.RedirectChains, func(a, b RedirectChain) int { return cmp.Compare(a.From, b.From) })
	slices.SortFunc(f.SlowPages, func(a, b SlowPage) int { return cmp.Compare(a.URL, b.URL) })
	return f
}

// consolidated reports whether pages all name the same canonical URL
// (a page naming none names itself).
func consolidated(pages []string, docs map[string]*document) bool {
	canonicalOf := func(u string) string { return cmp.Or(docs[u].canonical, u) }
	for _, u := range pages[1:] {
		if canonicalOf(u) != canonicalOf(pages[0]) {
			return false
		}
	}
	return true
}
