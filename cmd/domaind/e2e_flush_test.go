package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/demo"
	"github.com/domaind/domaind/models"
)

// TestEndToEndWorkSurvivesRedisFlush empties Redis, as a Redis restarted
// without its data would be, in the middle of the money workload of
// TestMoneyChaos (orders with their webhooks, transfers with their pushes,
// hosted payments with their refunds, settlement runs) while a bulk op and
// an seo-crawl job are under way and webhook deliveries wait for a retry
// (the receiver was down a moment). Redis is a cache of Postgres for what
// must happen: every piece of work still completes, exactly once in
// effect, within a few minutes: the chaos invariants hold, every item of
// the op reached the registry once, and the crawl finished every page.
func TestEndToEndWorkSurvivesRedisFlush(t *testing.T) {
	c := newCluster(t)
	run := chaosSettings(t)
	t.Logf("flush: seed %d, workload %v (replay: DOMAIND_CHAOS_SEED=%d)", run.seed, run.duration, run.seed)
	// Registry calls of 100 ms make the op's 1,000 items last seconds.
	w := newChaosWorld(t, c, run, "DOMAIND_SANDBOX_LATENCY=100ms")
	user, err := seedDemoUser(context.Background(), c.db, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	const items = 1000 // the most one bulk request takes
	if _, err := demo.Domains(context.Background(), c.db, user.ID, items, run.seed, time.Now()); err != nil {
		t.Fatal(err)
	}
	const pages = 40
	site := slowSite(t, pages, 300*time.Millisecond)

	workload := make(chan struct{})
	go func() {
		defer close(workload)
		w.runWorkload(run)
	}()
	time.Sleep(run.duration / 2)
	s := signInDemo(t, w.api)
	crawl := startCrawl(s, site, pages)
	op := c.lockDemoDomains(s, items, 0)
	w.receiver.down.Store(true) // deliveries wait in asynq for their retry
	c.waitFor("the op and the crawl under way", 30*time.Second, func() bool {
		var job models.ToolJob
		c.db.Take(&job, "id = ?", crawl)
		return c.bulkCounts(op)["done"] > 0 && job.Done > 0
	})
	time.Sleep(2 * time.Second) // deliveries failing meanwhile
	c.redis.Flush(t)
	w.receiver.down.Store(false)
	var job models.ToolJob
	c.db.Take(&job, "id = ?", crawl)
	t.Logf("flushed Redis with the op's items at %v and the crawl at %d/%d pages", c.bulkCounts(op), job.Done, job.Planned)
	if c.bulkCounts(op)["pending"] == 0 || job.Terminal() {
		t.Fatalf("the op (%v) or the crawl (%s) ended before the flush: the test needs them under way", c.bulkCounts(op), job.State)
	}
	<-workload
	w.settleAndCheck(run)

	c.waitFor("the op and the crawl done", time.Minute, func() bool {
		var job models.ToolJob
		c.db.Take(&job, "id = ?", crawl)
		return job.Terminal() && c.bulkCounts(op)["pending"] == 0
	})
	c.wantAppliedOnce(op, items)
	var handedBack int64
	c.db.Model(&models.OutboxEntry{}).Where("last_error LIKE ?", "%lost by Redis%").Count(&handedBack)
	t.Logf("tasks Redis lost, handed back to the sweep: %d", handedBack)
	if handedBack == 0 {
		t.Errorf("no task was handed back: the flush lost nothing, and the test shows nothing")
	}
	c.db.Take(&job, "id = ?", crawl)
	var report struct {
		Pages []struct{ URL string } `json:"pages"`
	}
	if err := json.Unmarshal(job.Result, &report); err != nil || job.State != models.JobDone || len(report.Pages) != pages {
		t.Errorf("crawl %s with %d pages (%v), error %q; want done with %d", job.State, len(report.Pages), err, job.Error, pages)
	}
}

// slowSite serves a home page linking to n-1 others, each page answered
// after delay: a crawl of it (four pages at a time) takes a while.
func slowSite(t *testing.T, n int, delay time.Duration) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		var i int
		if _, err := fmt.Sscanf(req.URL.Path, "/p%d", &i); (err != nil || i <= 0 || i >= n) && req.URL.Path != "/" {
			http.NotFound(rw, req)
			return
		}
		time.Sleep(delay)
		var links strings.Builder
		for j := 1; i == 0 && j < n; j++ {
			fmt.Fprintf(&links, `<a href="/p%d">page %d</a> `, j, j)
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!doctype html><html><head><title>Page %d</title><meta name="description" content="Page %d of a slow site."></head><body><h1>Page %d</h1>%s</body></html>`, i, i, i, links.String())
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// startCrawl asks for an seo-crawl of up to pages pages of site and
// returns the job's id.
func startCrawl(s *demoSession, site string, pages int) string {
	s.t.Helper()
	code, body := s.do("POST", "/api/tools/seo-crawl", fmt.Sprintf(`{"url":%q,"max_pages":%d}`, site+"/", pages))
	var tk struct {
		Result struct {
			JobID string `json:"jobId"`
		} `json:"result"`
	}
	if json.Unmarshal(body, &tk); code != 202 || !strings.HasPrefix(tk.Result.JobID, "job_") {
		s.t.Fatalf("seo-crawl = %d %s", code, body)
	}
	return tk.Result.JobID
}
