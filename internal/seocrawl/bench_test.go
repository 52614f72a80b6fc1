package seocrawl

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// BenchmarkCrawl100Pages crawls a local site of 100 pages, each linking to
// up to ten children, its neighbour and the home page, served with 5 ms
// of latency per page. The target is 5 s per crawl.
func BenchmarkCrawl100Pages(b *testing.B) {
	const pages, latency = 100, 5 * time.Millisecond
	handlers := map[string]http.HandlerFunc{}
	for n := range pages {
		var links []string
		for k := 10*n + 1; k <= 10*n+10 && k < pages; k++ {
			links = append(links, fmt.Sprintf("/p/%d", k))
		}
		links = append(links, fmt.Sprintf("/p/%d", (n+1)%pages), "/p/0")
		page := htmlPage(fmt.Sprintf("Page %d", n), fmt.Sprintf("About page %d", n), "", "<h1>Page</h1><p>Some words on the page.</p>", links...)
		handlers[fmt.Sprintf("/p/%d", n)] = func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(latency)
			page(w, r)
		}
	}
	site := newSite(b, "127.0.0.1", handlers)
	c := localClient()
	opts := Options{MaxPages: 100}

	crawls := 0
	for b.Loop() {
		r, err := Crawl(context.Background(), c, site.url("/p/0"), opts, nil)
		if err != nil {
			b.Fatal(err)
		}
		if r.Summary.PagesCrawled != pages {
			b.Fatalf("crawled %d pages, want %d", r.Summary.PagesCrawled, pages)
		}
		crawls++
	}
	perCrawl := b.Elapsed().Seconds() / float64(crawls)
	b.ReportMetric(perCrawl, "s/crawl")
	b.ReportMetric(pages/perCrawl, "pages/s")
}
