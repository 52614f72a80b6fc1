package partner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/demo"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/partnerclient"
)

// searchQueries are what partners' buyers type: paraphrases and keywords.
var searchQueries = []string{
	"inexpensive plane tickets", "puppy grooming", "coffee", "yoga studio", "cheap flights", "dentist near me",
	"organic vegetables", "used cars", "wedding photographer", "crypto wallet", "home insurance", "learn guitar",
	"bike repair", "vegan recipes", "law firm", "hotel booking", "pizza delivery", "running shoes", "math tutor", "solar panels",
}

// BenchmarkPartnerSearch1M fills the sandbox with 1,000,000 listings and
// times signed GET /api/partner/v1/domains/search requests from the Go
// client over loopback HTTP, through the whole service (signature, nonce,
// rate limit, index, the rows of the hits). It reports the latency at the
// 50th and 99th percentile (targets: 10 and 30 ms) and the memory the
// index holds per 100,000 listings (the heap after a collection, before
// the first search builds the index and after). Run it with -benchtime 1x.
func BenchmarkPartnerSearch1M(b *testing.B) {
	const listings = 1_000_000
	e := newEnv(b)
	ctx := context.Background()
	start := time.Now()
	n, err := demo.SandboxInventory(ctx, e.db, listings, e.now)
	if err != nil || n < listings {
		b.Fatalf("seeded %d sandbox listings (%v), want %d", n, err, listings)
	}
	seeded := time.Since(start)
	c := e.client(e.credential(models.EnvSandbox, "search"), 0)
	search := func(q string) {
		var got searchAnswer
		if err := c.GetJSON(ctx, "/api/partner/v1/domains/search", url.Values{"q": {q}}, &got); err != nil {
			b.Fatal(err)
		}
		if got.Count == 0 {
			b.Fatalf("nothing found for %q", q)
		}
	}
	before := heapAfterGC()
	start = time.Now()
	search("warm up") // builds the index
	build := time.Since(start)
	index := heapAfterGC() - before

	const rounds = 10 // 200 requests: inside one credential's 600 a minute
	var took []time.Duration
	b.ResetTimer()
	for b.Loop() {
		for range rounds {
			for _, q := range searchQueries {
				t := time.Now()
				search(q)
				took = append(took, time.Since(t))
			}
		}
	}
	b.StopTimer()
	slices.Sort(took)
	p50, p99 := took[len(took)/2], took[len(took)*99/100]
	per100k := float64(index) / (1 << 20) / (listings / 100_000)
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(per100k, "index-MiB/100k")
	b.Logf("%d signed searches over %d sandbox listings (seeded in %v; first search, building the index, %v; the index holds %.0f MiB, %.1f MiB per 100,000): p50 %v, p99 %v",
		len(took), listings, seeded.Round(time.Millisecond), build.Round(time.Millisecond), float64(index)/(1<<20), per100k, p50, p99)
}

// heapAfterGC is the live heap after a full collection.
func heapAfterGC() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// BenchmarkOrdersToWebhooks records 200 orders of 200 names at once, with
// a worker delivering their events to a local receiver, and reports
// orders/s and the time from each order's commit (its event's created_at,
// written in the order's transaction just before the commit) to the event
// arriving, at the 50th and 99th percentile. It does so twice, on other
// names: the first round on a service that has just started (each pooled
// connection prepares its statements, the worker makes its first
// pick-ups), the second on the same service warm. Each order's event must
// arrive exactly once. Run it with -benchtime 1x.
func BenchmarkOrdersToWebhooks(b *testing.B) {
	e := newEnv(b)
	e.realTime = true
	const n = 200
	rounds := []string{"cold", "warm"}
	for _, round := range rounds {
		for i := range n {
			e.addSandbox(fmt.Sprintf("%sorder%03d.com", round, i), 10_000)
		}
	}
	e.startWorker()

	var mu sync.Mutex
	arrived, committed := map[string]time.Time{}, map[string]time.Time{}
	dup := 0
	rcv := newReceiverFunc(b, func(body []byte) {
		at := time.Now()
		var env struct {
			CreatedAt time.Time `json:"created_at"`
			Data      struct {
				Order struct {
					Domain string `json:"domain"`
				} `json:"order"`
			} `json:"data"`
		}
		json.Unmarshal(body, &env)
		mu.Lock()
		defer mu.Unlock()
		if _, seen := arrived[env.Data.Order.Domain]; seen {
			dup++
		}
		arrived[env.Data.Order.Domain] = at
		committed[env.Data.Order.Domain] = env.CreatedAt
	})
	c := e.client(e.credential(models.EnvSandbox, "buy", "webhook"), 0)
	if err := putWebhook(c, rcv+"/hooks", "whsec_benchmark_receiver", nil); err != nil {
		b.Fatal(err)
	}

	// round records the round's orders at once, waits for their events and
	// returns orders/s and the commit-to-receipt p50 and p99.
	round := func(name string) (rate float64, p50, p99 time.Duration) {
		domain := func(i int) string { return fmt.Sprintf("%sorder%03d.com", name, i) }
		var failed atomic.Int32
		start := time.Now()
		parallel(n, func(i int) {
			res, _, err := c.Do(context.Background(), "POST", "/api/partner/v1/orders", nil, orderBody(domain(i), 10_000, ""),
				partnerclient.WithIdempotencyKey(domain(i)))
			if err != nil || res.StatusCode != 201 {
				failed.Add(1)
			}
		})
		recorded := time.Since(start)
		var took []time.Duration
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			took = took[:0]
			for i := range n {
				if at, ok := arrived[domain(i)]; ok {
					took = append(took, at.Sub(committed[domain(i)]))
				}
			}
			d := dup
			mu.Unlock()
			if failed.Load() > 0 || d > 0 || len(took) == n {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s round: %d of %d events arrived", name, len(took), n)
			}
		}
		if failed.Load() > 0 || dup > 0 {
			b.Fatalf("%s round: %d orders failed, %d events arrived twice", name, failed.Load(), dup)
		}
		slices.Sort(took)
		rate, p50, p99 = float64(n)/recorded.Seconds(), took[n/2], took[n*99/100]
		b.Logf("%s: %d concurrent orders of %d names: all recorded in %v (%.0f orders/s), each order.recorded delivered once; commit to event received p50 %v, p99 %v",
			name, n, n, recorded.Round(time.Millisecond), rate, p50, p99)
		return rate, p50, p99
	}
	for b.Loop() {
		for _, name := range rounds {
			rate, p50, p99 := round(name)
			b.ReportMetric(rate, name+"-orders/s")
			b.ReportMetric(float64(p50.Microseconds())/1000, name+"-p50-ms")
			b.ReportMetric(float64(p99.Microseconds())/1000, name+"-p99-ms")
		}
	}
}
