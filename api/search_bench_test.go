package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/registry/sandbox"
)

// timedSearch runs one search over HTTP and returns when the primary row
// and the done event arrived.
func timedSearch(client *http.Client, base, q, forwardedFor string) (primary, done time.Duration, err error) {
	req, _ := http.NewRequest("POST", base+"/api/domain/search", strings.NewReader(`{"q":"`+q+`"}`))
	req.Header.Set("Content-Type", "application/json")
	if forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", forwardedFor)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return 0, 0, fmt.Errorf("search %s: status %d", q, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var e struct {
			Kind   string `json:"kind"`
			Domain string `json:"domain"`
			State  string `json:"state"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return 0, 0, err
		}
		switch {
		case e.Kind == "row" && e.State == "unknown":
			return 0, 0, fmt.Errorf("search %s: %s is unknown", q, e.Domain)
		case e.Kind == "primary_done":
			primary = time.Since(start)
		case e.Kind == "done":
			return primary, time.Since(start), nil
		}
	}
	return 0, 0, fmt.Errorf("search %s: stream ended without done (%v)", q, sc.Err())
}

// BenchmarkSearchConcurrency shows that a label.tld search checks its 12
// TLDs concurrently: with DOMAIND_SANDBOX_LATENCY=100ms every check takes
// 100 ms, and the whole search must finish within 1.5× one check's latency
// (not 12×), with the primary row within 130 ms.
//
//	make bench
func BenchmarkSearchConcurrency(b *testing.B) {
	env := newTestEnv(b)
	seedTLDs(b, env)
	env.directRedis()
	const latency = 100 * time.Millisecond
	reg := sandbox.New(env.db, latency)
	env.withRegistry(reg)
	srv := httptest.NewServer(env.srv)
	defer srv.Close()

	const n = 40
	var checks, primaries, totals []time.Duration
	for i := range n + 3 {
		start := time.Now()
		if _, err := reg.Check(context.Background(), fmt.Sprintf("single-check-%d.com", i)); err != nil {
			b.Fatal(err)
		}
		check := time.Since(start)
		primary, total, err := timedSearch(srv.Client(), srv.URL, fmt.Sprintf("concurrency-bench-%d.com", i), "")
		if err != nil {
			b.Fatal(err)
		}
		if i < 3 {
			continue // warm-up
		}
		checks, primaries, totals = append(checks, check), append(primaries, primary), append(totals, total)
	}
	check, primary, total := percentile(checks, 50), percentile(primaries, 50), percentile(totals, 50)
	ratio := float64(total) / float64(check)
	b.ReportMetric(float64(check.Microseconds())/1000, "check_ms")
	b.ReportMetric(float64(primary.Microseconds())/1000, "primary_p50_ms")
	b.ReportMetric(float64(total.Microseconds())/1000, "search_p50_ms")
	b.ReportMetric(ratio, "search/check")
	b.Logf("%d searches of 12 TLDs, sandbox latency %v: one check p50 %v; primary row p50 %v (p99 %v); whole search p50 %v (p99 %v); search/check %.2f",
		n, latency, check, primary, percentile(primaries, 99), total, percentile(totals, 99), ratio)
}

// BenchmarkSearchLoad runs 200 concurrent searchers against one server
// (each from its own client address, so the per-IP limit is not what is
// measured), with the sandbox answering in 100 ms, and reports searches/s
// and latency percentiles. Any error fails the benchmark.
//
//	make bench
func BenchmarkSearchLoad(b *testing.B) {
	env := newTestEnv(b, func(c *config.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	seedTLDs(b, env)
	env.directRedis()
	env.withRegistry(sandbox.New(env.db, 100*time.Millisecond))
	srv := httptest.NewServer(env.srv)
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	client := &http.Client{Transport: tr, Timeout: time.Minute}

	const searchers, each = 200, 5
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      []error
		wg        sync.WaitGroup
	)
	start := time.Now()
	for s := range searchers {
		wg.Go(func() {
			ip := fmt.Sprintf("10.0.%d.%d", s/250, s%250+1)
			for i := range each {
				_, total, err := timedSearch(client, srv.URL, fmt.Sprintf("load-%d-%d.com", s, i), ip)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					latencies = append(latencies, total)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(errs) > 0 {
		b.Fatalf("%d of %d searches failed; first: %v", len(errs), searchers*each, errs[0])
	}
	rate := float64(len(latencies)) / elapsed.Seconds()
	b.ReportMetric(rate, "searches/s")
	b.ReportMetric(float64(percentile(latencies, 50).Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(percentile(latencies, 99).Microseconds())/1000, "p99_ms")
	b.Logf("%d concurrent searchers × %d searches of 12 TLDs (sandbox latency 100ms): %d ok, 0 errors, %.0f searches/s (%.0f checks/s), p50 %v, p99 %v",
		searchers, each, len(latencies), rate, rate*12, percentile(latencies, 50), percentile(latencies, 99))
}

// BenchmarkPricingThroughput compares the pricing endpoint (rate limiter on
// Redis, catalog read) with a constant response from the same gin engine and
// middleware, both over HTTP on loopback with keep-alive connections. The
// target is about 64 clients, each with its own address, asking back to
// back (a loaded server); it is also run with 16, and with the 64
// connections as one client at a time (every request of the moment from
// one address: one client bursting 64 wide, which waits on its own
// limit's round trips). A client moves to a fresh address every 100
// requests, under the limit of 120 a minute. Each ratio is the median of
// rounds that run the two routes back to back, so that a noisy moment on
// the shared machine weighs on one round only.
// Target: ratio ≥ 0.75.
//
//	make bench
func BenchmarkPricingThroughput(b *testing.B) {
	env := newTestEnv(b, func(c *config.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	seedTLDs(b, env)
	env.deps.Now = time.Now // leases end and windows slide as in production
	env.directRedis()
	env.srv.engine.GET("/bench/constant", func(c *gin.Context) {
		c.JSON(200, priceResponse{TLD: "com", Op: "register", PriceCents: ptr(int64(1099))})
	})
	srv := httptest.NewServer(env.srv)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

	const total, rounds, perAddress = 15000, 9, 100
	var addresses atomic.Int64 // every run from fresh addresses
	address := func() string {
		a := addresses.Add(1)
		return fmt.Sprintf("10.%d.%d.%d", a/62500, a/250%250, a%250+1)
	}
	// run sends total requests to path from workers connections; shared
	// makes all of them one client at a time.
	run := func(path string, workers int, shared bool) float64 {
		var wg sync.WaitGroup
		var failed, next atomic.Int64
		var sharedMu sync.Mutex
		sharedAddr := map[int64]string{}
		start := time.Now()
		for range workers {
			wg.Go(func() {
				var mine string
				for n := 0; ; n++ {
					i := next.Add(1)
					if i > total {
						return
					}
					if shared {
						sharedMu.Lock()
						if sharedAddr[i/perAddress] == "" {
							sharedAddr[i/perAddress] = address()
						}
						mine = sharedAddr[i/perAddress]
						sharedMu.Unlock()
					} else if n%perAddress == 0 {
						mine = address()
					}
					req, _ := http.NewRequest("GET", srv.URL+path, nil)
					req.Header.Set("X-Forwarded-For", mine)
					resp, err := client.Do(req)
					if err != nil {
						failed.Add(1)
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						failed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if failed.Load() > 0 {
			b.Fatalf("%s: %d requests failed", path, failed.Load())
		}
		return total / time.Since(start).Seconds()
	}
	run("/bench/constant", 64, false) // warm-up
	for _, load := range []struct {
		name    string
		workers int
		shared  bool
		metric  string
	}{
		{"64 clients", 64, false, "ratio"},
		{"16 clients", 16, false, "ratio_16_clients"},
		{"one client 64 wide", 64, true, "ratio_one_client_64_wide"},
	} {
		var constant, pricing, ratio []float64
		for range rounds {
			c := run("/bench/constant", load.workers, load.shared)
			p := run("/api/pricing/tld?tld=com&op=register", load.workers, load.shared)
			constant, pricing, ratio = append(constant, c), append(pricing, p), append(ratio, p/c)
		}
		b.Logf("%d rounds of %d requests each over loopback HTTP, %s: pricing (rate limiter + catalog) median %.0f req/s, constant response median %.0f req/s, ratio median %.2f (rounds %.2f)",
			rounds, total, load.name, medianOf(pricing), medianOf(constant), medianOf(ratio), ratio)
		if load.metric == "ratio" {
			b.ReportMetric(medianOf(pricing), "pricing_req/s")
			b.ReportMetric(medianOf(constant), "constant_req/s")
		}
		b.ReportMetric(medianOf(ratio), load.metric)
	}
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkWhoisQueueOverhead compares a WHOIS lookup through the service
// (HTTP request, outbox, rdap queue, worker, Redis notification) with the
// same RDAP lookup made directly in-process, against the same local RDAP
// server answering the recorded .com fixture. Target: added p50 ≤ 8 ms (p99 ≤ 15 ms).
//
//	make bench
func BenchmarkWhoisQueueOverhead(b *testing.B) {
	env := newTestEnv(b)
	env.directRedis()
	world := newLookupWorld(b)
	startLookupWorker(b, env, world.resolver)
	const n = 200
	var direct, queued []time.Duration
	for i := range n + 10 {
		start := time.Now()
		if _, err := world.resolver.Resolve(context.Background(), fmt.Sprintf("bench-direct-%d.com", i)); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)

		r := httptest.NewRequest("POST", "/api/tools/whois", strings.NewReader(fmt.Sprintf(`{"domain":"bench-queued-%d.com"}`, i)))
		r.Header.Set("Content-Type", "application/json")
		r.RemoteAddr = fmt.Sprintf("10.9.%d.%d:4000", i/250, i%250+1) // a fresh daily quota per request
		w := httptest.NewRecorder()
		start = time.Now()
		env.srv.ServeHTTP(w, r)
		q := time.Since(start)
		if w.Code != 201 {
			b.Fatalf("whois = %d %s", w.Code, w.Body)
		}
		if i >= 10 { // warm-up
			direct, queued = append(direct, d), append(queued, q)
		}
	}
	added := percentile(queued, 50) - percentile(direct, 50)
	b.ReportMetric(float64(percentile(direct, 50).Microseconds())/1000, "direct_p50_ms")
	b.ReportMetric(float64(percentile(queued, 50).Microseconds())/1000, "queued_p50_ms")
	b.ReportMetric(float64(added.Microseconds())/1000, "added_p50_ms")
	b.Logf("%d lookups each: direct in-process p50 %v p99 %v; through the queue p50 %v p99 %v; added p50 %v",
		n, percentile(direct, 50), percentile(direct, 99), percentile(queued, 50), percentile(queued, 99), added)
}
