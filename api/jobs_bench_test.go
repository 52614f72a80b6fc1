package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/registry/sandbox"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/worker"
)

// BenchmarkBulkLock1000 times a 1,000-domain lock (then unlock, in turns)
// from the request to the status reporting done, with every registry call
// taking 20 ms (DOMAIND_SANDBOX_LATENCY=20ms), polling the status as a
// client would and recording the progress it shows on the way.
func BenchmarkBulkLock1000(b *testing.B) {
	const n, latency = 1000, 20 * time.Millisecond
	env := newTestEnv(b)
	seedTLDs(b, env)
	o := newOwner(b, env, "bench@example.com", n)
	startWorker(b, env, worker.Deps{Registry: sandbox.New(env.db, latency)})
	names := o.names(n)
	var total time.Duration
	var progress []int
	b.ResetTimer()
	for i := range b.N {
		op := []string{"lock", "unlock"}[i%2]
		start := time.Now()
		res, body := o.bulk(op, map[string]any{"domains": names})
		var q struct{ BulkOpID string }
		if json.Unmarshal([]byte(body), &q); res.StatusCode != 200 {
			b.Fatalf("%s = %d %s", op, res.StatusCode, body)
		}
		for {
			code, st := o.status(q.BulkOpID, "?limit=1")
			if code != 200 {
				b.Fatalf("status = %d", code)
			}
			if st.Status == models.BulkDone {
				if st.Counts["done"] != n {
					b.Fatalf("done with %+v", st.Counts)
				}
				break
			}
			if st.Status == models.BulkFailed {
				b.Fatalf("op failed: %s", st.Error)
			}
			if d := st.Progress.Done; d > 0 && d < n && (len(progress) == 0 || progress[len(progress)-1] != d) {
				progress = append(progress, d)
			}
			time.Sleep(25 * time.Millisecond)
		}
		total += time.Since(start)
	}
	per := total.Seconds() / float64(b.N)
	b.ReportMetric(per, "s/op_done")
	b.ReportMetric(float64(n)/per, "items/s")
	b.ReportMetric(n*latency.Seconds()/per, "x_serial")
	shown := progress[:min(len(progress), 12)]
	b.Logf("%d-domain bulk lock, registry latency %v, %d runs: %.2f s from request to done (serial would be %.0f s), %.0f items/s; progress seen while running: %v…",
		n, latency, b.N, per, n*latency.Seconds(), float64(n)/per, shown)
}

// hundredPageSite is a site of 100 pages, each linking to ten others (a
// tree under the home page, so depth 2 reaches all of them) and answering
// after 5 ms.
func hundredPageSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		if r.URL.Path != "/" {
			if _, err := fmt.Sscanf(r.URL.Path, "/p%d", &i); err != nil || i < 1 || i > 99 {
				http.NotFound(w, r)
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
		var links strings.Builder
		for c := i*10 + 1; c <= i*10+10 && c < 100; c++ {
			fmt.Fprintf(&links, `<a href="/p%d">page %d</a> `, c, c)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><head><title>Page %d</title><meta name="description" content="Page %d of the test site"></head><body><h1>Page %d</h1><p>Some words about page %d.</p>%s</body></html>`, i, i, i, i, links.String())
	})
}

// BenchmarkSEOCrawlJob100Pages times an seo-crawl job of a 100-page local
// site from the request to the status reporting done.
func BenchmarkSEOCrawlJob100Pages(b *testing.B) {
	env := newTestEnv(b)
	site := serveTestSite(b, hundredPageSite())
	startWorker(b, env, worker.Deps{Tools: env.deps.Tools})
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		env.now = env.now.Add(time.Hour) // a fresh hour of quota
		start := time.Now()
		w := env.request("POST", "/api/tools/seo-crawl", fmt.Sprintf(`{"url":%q,"max_pages":100}`, site+"/"))
		var tk ticket
		if json.Unmarshal(w.Body.Bytes(), &tk); w.Code != 202 {
			b.Fatalf("seo-crawl = %d %s", w.Code, w.Body)
		}
		for {
			code, st := env.jobStatus(b, "seo-crawl", tk.Result.JobID)
			if code != 200 || st.Status == models.JobFailed {
				b.Fatalf("status = %d %+v", code, st)
			}
			if st.Status == models.JobDone {
				if st.Progress.Done != 100 {
					b.Fatalf("crawled %d pages, want 100", st.Progress.Done)
				}
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		total += time.Since(start)
	}
	per := total.Seconds() / float64(b.N)
	b.ReportMetric(per, "s/crawl_done")
	b.ReportMetric(100/per, "pages/s")
	b.Logf("seo-crawl job of a 100-page local site (5 ms per page), %d runs: %.2f s from request to done, %.0f pages/s", b.N, per, 100/per)
}
