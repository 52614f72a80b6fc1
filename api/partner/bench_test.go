package partner_test

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/demo"
	"github.com/domaind/domaind/models"
)

// searchQueries are what partners' buyers type: paraphrases and keywords.
var searchQueries = []string{
	"inexpensive plane tickets", "puppy grooming", "coffee", "yoga studio", "cheap flights", "dentist near me",
	"organic vegetables", "used cars", "wedding photographer", "crypto wallet", "home insurance", "learn guitar",
	"bike repair", "vegan recipes", "law firm", "hotel booking", "pizza delivery", "running shoes", "math tutor", "solar panels",
}

// BenchmarkPartnerSearch100k fills the sandbox with 100,000 listings and
// times signed GET /api/partner/v1/domains/search requests from the Go
// client over loopback HTTP, through the whole service (signature, nonce,
// rate limit, index, the rows of the hits). It reports the latency at the
// 50th and 99th percentile. Run it with -benchtime 1x.
func BenchmarkPartnerSearch100k(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	start := time.Now()
	n, err := demo.SandboxInventory(ctx, e.db, 100_000, e.now)
	if err != nil || n < 100_000 {
		b.Fatalf("seeded %d sandbox listings (%v), want 100000", n, err)
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
	start = time.Now()
	search("warm up") // builds the index
	build := time.Since(start)

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
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.Logf("%d signed searches over 100,000 sandbox listings (seeded in %v; first search, building the index, %v): p50 %v, p99 %v",
		len(took), seeded.Round(time.Millisecond), build.Round(time.Millisecond), p50, p99)
}
