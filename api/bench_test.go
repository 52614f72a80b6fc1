package api

import (
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/ratelimit"
)

// BenchmarkRateLimitOverhead measures what the rate-limit middleware adds to
// a request: the same engine serves a route with and without it, requests
// alternate between the two, and the p50 and p99 of each are compared.
// Target: added p50 < 0.3 ms on loopback Redis.
//
//	make bench   (real Redis)
func BenchmarkRateLimitOverhead(b *testing.B) {
	if os.Getenv("DOMAIND_TEST_REDIS_URL") == "" {
		b.Skip("measured on real Redis: set DOMAIND_TEST_REDIS_URL (make bench does)")
	}
	env := newTestEnv(b)
	ok := func(c *gin.Context) { c.String(200, "ok") }
	env.srv.engine.GET("/bench/plain", ok)
	env.srv.engine.GET("/bench/limited", env.srv.limit(ratelimit.PerMinute("bench", 1_000_000_000)), ok)

	const n = 5000
	plain := make([]time.Duration, 0, n)
	limited := make([]time.Duration, 0, n)
	timeOne := func(path string) time.Duration {
		r := httptest.NewRequest("GET", path, nil)
		w := httptest.NewRecorder()
		start := time.Now()
		env.srv.ServeHTTP(w, r)
		d := time.Since(start)
		if w.Code != 200 {
			b.Fatalf("%s = %d %s", path, w.Code, w.Body)
		}
		return d
	}
	for range 200 { // warm connections and caches
		timeOne("/bench/plain")
		timeOne("/bench/limited")
	}
	for range n {
		plain = append(plain, timeOne("/bench/plain"))
		limited = append(limited, timeOne("/bench/limited"))
	}
	p50p, p99p := percentile(plain, 50), percentile(plain, 99)
	p50l, p99l := percentile(limited, 50), percentile(limited, 99)
	added := p50l - p50p
	b.ReportMetric(float64(added.Microseconds())/1000, "added_p50_ms")
	b.ReportMetric(float64(p99l.Microseconds())/1000, "limited_p99_ms")
	b.Logf("%d requests each: without limiter p50 %v p99 %v; with limiter p50 %v p99 %v; added p50 %v",
		n, p50p, p99p, p50l, p99l, added)
}

func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
