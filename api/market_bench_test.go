package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/demo"
	"github.com/domaind/domaind/internal/market"
	"github.com/domaind/domaind/models"
)

// benchListings is the size of the marketplace the paging benchmark walks.
const benchListings = 1_000_000

// BenchmarkListingsPaging shows why the marketplace pages with keyset
// cursors: on Postgres with 1,000,000 listings, a page deep in the list (90 %
// of the way) costs about what the first page costs, for every sort, where
// the same page by offset costs far more. Target: deep cursor page ≤ 2× the
// first page (p50). It also reports requests/s of the first page at
// limit=24 over HTTP.
//
//	make bench   (real Postgres)
func BenchmarkListingsPaging(b *testing.B) {
	if os.Getenv("DOMAIND_TEST_DATABASE_URL") == "" {
		b.Skip("measured on Postgres with a million listings: set DOMAIND_TEST_DATABASE_URL (make bench does)")
	}
	env := newTestEnv(b, func(c *config.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	env.directRedis()
	ctx := context.Background()
	start := time.Now()
	if _, err := demo.Listings(ctx, env.db, benchListings, 1, env.now); err != nil {
		b.Fatal(err)
	}
	if err := env.db.Exec("ANALYZE listings").Error; err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d listings in %v", benchListings, time.Since(start).Round(time.Second))
	srv := httptest.NewServer(env.srv)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

	var n atomic.Int64
	get := func(query string) time.Duration {
		i := n.Add(1)
		req, _ := http.NewRequest("GET", srv.URL+"/api/market/listings?"+query, nil)
		// 250 requests per client address stay under the listings limit.
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.1", i/250/250, i/250%250))
		t0 := time.Now()
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("listings?%s = %d", query, res.StatusCode)
		}
		return time.Since(t0)
	}
	p50 := func(query string, samples int) time.Duration {
		get(query) // warm
		ds := make([]time.Duration, samples)
		for i := range ds {
			ds[i] = get(query)
		}
		return percentile(ds, 50)
	}

	var total int64
	env.db.Scopes(models.PublicListings).Count(&total)
	deep := int(total * 9 / 10)
	for _, sort := range market.Sorts {
		// The cursor a client would hold after walking 90 % of the list.
		var last models.Listing
		if err := env.db.Scopes(models.PublicListings).Order(market.OrderBy(sort)).Offset(deep - 1).Limit(1).Take(&last).Error; err != nil {
			b.Fatal(err)
		}
		cursor, err := env.srv.svc.Market.Cursor(market.Query{Sort: sort}, last)
		if err != nil {
			b.Fatal(err)
		}
		first := p50("limit=24&sort="+sort, 100)
		deepCursor := p50("limit=24&sort="+sort+"&cursor="+url.QueryEscape(cursor), 100)
		deepOffset := p50(fmt.Sprintf("limit=24&sort=%s&offset=%d", sort, deep), 15)
		ratio := float64(deepCursor) / float64(first)
		b.ReportMetric(ratio, "deep/first_"+sort)
		b.Logf("%s (%d public listings): first page p50 %v; page at %d by cursor p50 %v (%.2f× the first); by offset p50 %v (%.1f×)",
			sort, total, first, deep, deepCursor, ratio, deepOffset, float64(deepOffset)/float64(first))
	}

	const requests, workers = 3000, 16
	var wg sync.WaitGroup
	var next atomic.Int64
	t0 := time.Now()
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= requests {
				get("limit=24")
			}
		})
	}
	wg.Wait()
	rate := requests / time.Since(t0).Seconds()
	b.ReportMetric(rate, "first_page_req/s")
	b.Logf("first page (limit=24, newest, with the exact total), %d clients: %.0f requests/s", workers, rate)
}
