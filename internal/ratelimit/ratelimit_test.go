package ratelimit_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/ratelimit"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func TestRateRefusesThe61stRequestInAMinute(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	l := ratelimit.New(r.Client, clk.now)
	p := ratelimit.PerMinute("search", 60)
	ctx := context.Background()
	for i := 1; i <= 60; i++ {
		res, err := l.Allow(ctx, p, "203.0.113.7")
		if err != nil {
			t.Fatal(err)
		}
		if !res.Allowed {
			t.Fatalf("request %d refused, want allowed", i)
		}
		if res.Remaining != 60-i {
			t.Fatalf("request %d: remaining = %d, want %d", i, res.Remaining, 60-i)
		}
	}
	res, err := l.Allow(ctx, p, "203.0.113.7")
	if err != nil {
		t.Fatal(err)
	}
	if res.Allowed || res.Remaining != 0 {
		t.Fatalf("61st: allowed %v remaining %d; want refused with 0 left", res.Allowed, res.Remaining)
	}
	if res.RetryAfter != time.Minute || res.Reset != time.Minute {
		t.Errorf("61st: retry after %v, reset %v; want 1m (the first request of the window leaves it then)", res.RetryAfter, res.Reset)
	}
	other, err := l.Allow(ctx, p, "203.0.113.8")
	if err != nil || !other.Allowed {
		t.Errorf("another client was refused (%v, %v): limits must be per client", other.Allowed, err)
	}
	clk.set(clk.now().Add(59 * time.Second))
	if res, _ := l.Allow(ctx, p, "203.0.113.7"); res.Allowed || res.RetryAfter != time.Second {
		t.Errorf("59 s later = %+v, want still refused, for one more second", res)
	}
	clk.set(clk.now().Add(time.Second))
	if res, _ := l.Allow(ctx, p, "203.0.113.7"); !res.Allowed || res.Remaining != 59 {
		t.Errorf("a minute later = %+v, want the full limit back", res)
	}
}

// SPEC §8's "N per minute" holds for every 60-second window, wherever it
// starts: an idle client's burst is not followed by a second minute's worth.
// Units taken ahead (Lease) change nothing to it.
func TestRateNeverAllowsMoreThanTheLimitInAnyWindow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lease int
		every time.Duration
	}{{0, 250 * time.Millisecond}, {16, 100 * time.Millisecond}} {
		t.Run(fmt.Sprintf("lease %d, a request every %v", c.lease, c.every), func(t *testing.T) {
			r := platformtest.NewRedis(t)
			start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
			clk := &clock{t: start}
			l := ratelimit.New(r.Client, clk.now)
			p := ratelimit.PerMinute("pricing", 120)
			p.Lease = c.lease
			ctx := context.Background()
			var allowed []time.Time
			try := func() {
				res, err := l.Allow(ctx, p, "198.51.100.9")
				if err != nil {
					t.Fatal(err)
				}
				if res.Allowed {
					allowed = append(allowed, clk.now())
				}
			}
			for range 200 { // an idle client's burst
				try()
			}
			// Then a request at every step, with a pause, for four minutes.
			for at := c.every; at < 4*time.Minute; at += c.every {
				if at > 100*time.Second && at < 130*time.Second {
					continue
				}
				clk.set(start.Add(at))
				try()
			}
			for i, from := range allowed {
				n := 0
				for _, at := range allowed[i:] {
					if at.Sub(from) < time.Minute {
						n++
					}
				}
				if n > p.Limit {
					t.Fatalf("%d requests allowed in the minute from %v, want at most %d", n, from.Sub(start), p.Limit)
				}
			}
			if len(allowed) < 3*p.Limit+p.Limit/2 {
				t.Errorf("%d requests allowed in four minutes of asking at least twice the rate, want the limit used (at least %d)", len(allowed), 3*p.Limit+p.Limit/2)
			}
		})
	}
}

// A client that bursts takes units ahead, and sees the same answers as if
// each request had gone to Redis: the remaining count falls by one each
// time, and the request past the limit is refused.
func TestLeaseAnswersLikeOneTripPerRequest(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	l := ratelimit.New(r.Client, clk.now)
	p := ratelimit.PerMinute("pricing", 120)
	p.Lease = 16
	ctx := context.Background()
	for i := 1; i <= 120; i++ {
		res, err := l.Allow(ctx, p, "203.0.113.7")
		if err != nil {
			t.Fatal(err)
		}
		if !res.Allowed || res.Remaining != 120-i {
			t.Fatalf("request %d: allowed %v, remaining %d; want allowed with %d left", i, res.Allowed, res.Remaining, 120-i)
		}
	}
	if res, _ := l.Allow(ctx, p, "203.0.113.7"); res.Allowed {
		t.Fatal("the 121st request of the minute was allowed")
	}
	// The log holds the 120 units in a few trips; it frees with the first.
	if res, err := l.Status(ctx, p, "203.0.113.7"); err != nil || res.Allowed || res.Remaining != 0 || res.RetryAfter != time.Minute {
		t.Errorf("status = %+v, %v; want refused until the first unit leaves, a minute on", res, err)
	}
}

// Two processes serving one bursting client never allow more than the
// limit together; the units one took ahead and did not spend come back
// once its lease ends, with the client's next request there.
func TestLeasesKeepTheLimitAcrossProcesses(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	procs := []*ratelimit.Limiter{ratelimit.New(r.Client, clk.now), ratelimit.New(r.Client, clk.now)}
	p := ratelimit.PerMinute("pricing", 120)
	p.Lease = 16
	ctx := context.Background()
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			res, err := procs[i%2].Allow(ctx, p, "198.51.100.9")
			if err != nil {
				t.Error(err)
			}
			if res.Allowed {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != 100 {
		t.Fatalf("%d of 100 requests under the limit allowed", n)
	}
	clk.set(clk.now().Add(time.Second)) // every lease has ended, some with units unspent
	total := int(allowed.Load())
	for _, l := range procs {
		for range 100 {
			if res, _ := l.Allow(ctx, p, "198.51.100.9"); res.Allowed {
				total++
			}
		}
	}
	if total != 120 {
		t.Errorf("%d requests allowed in the minute, want exactly the limit of 120 (the units left unspent come back)", total)
	}
}

func TestDayQuotaResetsAtUTCMidnight(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	clk := &clock{t: time.Date(2026, 11, 22, 23, 59, 0, 0, time.UTC)}
	l := ratelimit.New(r.Client, clk.now)
	p := ratelimit.PerDay("whois", 10)
	ctx := context.Background()
	for i := 1; i <= 10; i++ {
		res, err := l.Allow(ctx, p, "198.51.100.1")
		if err != nil || !res.Allowed || res.Used != i || res.Remaining != 10-i {
			t.Fatalf("lookup %d = %+v, %v; want allowed, used %d", i, res, err, i)
		}
	}
	res, err := l.Allow(ctx, p, "198.51.100.1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Allowed || res.Used != 10 {
		t.Fatalf("11th = %+v; want refused with used still 10", res)
	}
	if res.RetryAfter != time.Minute || res.Reset != time.Minute {
		t.Errorf("11th: retry after %v reset %v, want 1m until midnight", res.RetryAfter, res.Reset)
	}

	clk.set(time.Date(2026, 11, 23, 0, 0, 1, 0, time.UTC))
	res, err = l.Allow(ctx, p, "198.51.100.1")
	if err != nil || !res.Allowed || res.Used != 1 {
		t.Fatalf("first of the new day = %+v, %v; want allowed with used 1", res, err)
	}
	if want := 24*time.Hour - time.Second; res.Reset != want {
		t.Errorf("reset = %v, want %v", res.Reset, want)
	}
}

func TestRefundGivesBackOneUnit(t *testing.T) {
	t.Parallel()
	leased := ratelimit.PerMinute("leased", 2)
	leased.Lease = 16
	for _, p := range []ratelimit.Policy{ratelimit.PerDay("whois", 2), ratelimit.PerMinute("failures", 2), leased} {
		t.Run(p.Name, func(t *testing.T) {
			r := platformtest.NewRedis(t)
			clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
			l := ratelimit.New(r.Client, clk.now)
			ctx := context.Background()
			l.Allow(ctx, p, "c")
			second, _ := l.Allow(ctx, p, "c")
			refused, _ := l.Allow(ctx, p, "c")
			if refused.Allowed {
				t.Fatalf("third of two = %+v, want refused", refused)
			}
			if err := l.Refund(ctx, p, "c", refused); err != nil {
				t.Fatal(err)
			}
			if res, _ := l.Allow(ctx, p, "c"); res.Allowed {
				t.Errorf("after giving back a refused unit = %+v; want still refused (it spent nothing)", res)
			}
			if err := l.Refund(ctx, p, "c", second); err != nil {
				t.Fatal(err)
			}
			if res, _ := l.Allow(ctx, p, "c"); !res.Allowed || res.Remaining != 0 {
				t.Errorf("after refund = %+v; want allowed, none left", res)
			}
		})
	}
}

func TestPolicyHeader(t *testing.T) {
	for _, tc := range []struct {
		p    ratelimit.Policy
		want string
	}{
		{ratelimit.PerMinute("search", 60), "60;w=60"},
		{ratelimit.PerDay("whois", 10), "10;w=86400"},
	} {
		if got := tc.p.Header(); got != tc.want {
			t.Errorf("%s header = %q, want %q", tc.p.Name, got, tc.want)
		}
	}
}

// Concurrent checks share Redis round trips; each must still spend exactly
// one unit and get its own answer.
func TestConcurrentChecksSpendOneUnitEach(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	l := ratelimit.New(r.Client, time.Now)
	p := ratelimit.PerMinute("burst", 100)
	const callers = 250
	results := make([]ratelimit.Result, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { results[i], errs[i] = l.Allow(context.Background(), p, "192.0.2.9") })
	}
	wg.Wait()
	allowed := 0
	remaining := map[int]bool{}
	for i, res := range results {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if res.Allowed {
			allowed++
			if remaining[res.Remaining] {
				t.Errorf("two allowed calls both left %d remaining", res.Remaining)
			}
			remaining[res.Remaining] = true
		}
	}
	if allowed != 100 {
		t.Errorf("%d of %d concurrent calls allowed, want exactly the limit of 100", allowed, callers)
	}
}

// A Redis that lost its scripts (restart, SCRIPT FLUSH) gets them again
// without failing or double-spending the calls that met the loss. The
// script cache is the whole server's, so the test has a server of its own.
func TestChecksSurviveAFlushedScriptCache(t *testing.T) {
	t.Parallel()
	r := platformtest.NewServerRedis(t)
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	l := ratelimit.New(r.Client, clk.now)
	ctx := context.Background()
	rate, day := ratelimit.PerMinute("flush", 10), ratelimit.PerDay("flushq", 10)
	for i := 1; i <= 3; i++ {
		if err := r.Client.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		res, err := l.Allow(ctx, rate, "c")
		if err != nil || res.Remaining != 10-i {
			t.Fatalf("rate call %d after flush = %+v, %v; want remaining %d", i, res, err, 10-i)
		}
		if err := r.Client.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		res, err = l.Allow(ctx, day, "c")
		if err != nil || res.Used != i {
			t.Fatalf("quota call %d after flush = %+v, %v; want used %d", i, res, err, i)
		}
	}
}

// A quota counts the same whatever Redis's clock says: its expiry is
// relative, so a limiter clock days behind Redis (as in tests that pin a
// date) still keeps today's counter.
func TestDayQuotaIgnoresRedisClock(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	clk := &clock{t: time.Date(2020, 1, 1, 23, 0, 0, 0, time.UTC)}
	l := ratelimit.New(r.Client, clk.now)
	p := ratelimit.PerDay("old", 3)
	for i := 1; i <= 3; i++ {
		res, err := l.Allow(context.Background(), p, "c")
		if err != nil || !res.Allowed || res.Used != i {
			t.Fatalf("lookup %d = %+v, %v; want allowed with used %d", i, res, err, i)
		}
	}
	if res, _ := l.Allow(context.Background(), p, "c"); res.Allowed {
		t.Errorf("4th lookup of a quota of 3 allowed: %+v", res)
	}
}

// Status reads what Allow would find and spends nothing.
func TestStatusSpendsNothing(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	l := ratelimit.New(r.Client, clk.now)
	ctx := context.Background()
	leased := ratelimit.PerMinute("l", 3)
	leased.Lease = 16
	for _, p := range []ratelimit.Policy{ratelimit.PerMinute("s", 3), ratelimit.PerDay("q", 3), leased} {
		clk.set(start)
		if res, err := l.Status(ctx, p, "c"); err != nil || !res.Allowed || res.Remaining != 3 {
			t.Fatalf("%s fresh status = %+v, %v", p.Name, res, err)
		}
		for i := range 3 {
			clk.set(start.Add(time.Duration(i) * time.Second))
			l.Allow(ctx, p, "c")
		}
		for range 3 {
			res, err := l.Status(ctx, p, "c")
			if err != nil || res.Allowed || res.Remaining != 0 || res.RetryAfter <= 0 {
				t.Fatalf("%s status when spent = %+v, %v; want refused, unchanged by looking", p.Name, res, err)
			}
		}
		if p.Kind == ratelimit.Rate {
			res, _ := l.Status(ctx, p, "c")
			if res.RetryAfter != 58*time.Second || res.Reset != time.Minute {
				t.Errorf("status retry after %v, reset %v; want 58s (the first unit leaves the window) and 1m", res.RetryAfter, res.Reset)
			}
			clk.set(start.Add(time.Minute))
			if res, _ := l.Status(ctx, p, "c"); !res.Allowed || res.Remaining != 1 {
				t.Errorf("status a minute after the first = %+v, want one unit free", res)
			}
		}
	}
}

// StatusAll reads several limits in one pipeline, each as Status reads
// it alone: a rate, a day quota and a leased rate, fresh and spent.
func TestStatusAllReadsEveryLimitInOnePipeline(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	l := ratelimit.New(r.Client, clk.now)
	ctx := context.Background()
	leased := ratelimit.PerMinute("l", 3)
	leased.Lease = 16
	var checks []ratelimit.Check
	for _, p := range []ratelimit.Policy{ratelimit.PerMinute("s", 3), ratelimit.PerDay("q", 2), leased} {
		for range 2 {
			l.Allow(ctx, p, "spent")
		}
		checks = append(checks, ratelimit.Check{Policy: p, Client: "spent"}, ratelimit.Check{Policy: p, Client: "fresh"})
	}
	var want []ratelimit.Result
	for _, c := range checks { // loads the scripts too
		res, err := l.Status(ctx, c.Policy, c.Client)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, res)
	}

	var sends atomic.Int64
	r.Client.AddHook(sendCounter{&sends})
	got, err := l.StatusAll(ctx, checks...)
	if err != nil {
		t.Fatal(err)
	}
	if n := sends.Load(); n != 1 {
		t.Errorf("StatusAll of %d limits sent %d times to Redis, want 1 pipeline", len(checks), n)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("StatusAll = %+v\nwant what Status says of each: %+v", got, want)
	}
	for i, res := range got {
		spent := 2 * ((i + 1) % 2) // the checks alternate: spent, fresh
		if res.Remaining != res.Limit-spent {
			t.Errorf("StatusAll of %+v = %d left of %d, want %d", checks[i], res.Remaining, res.Limit, res.Limit-spent)
		}
	}
}

// sendCounter counts the commands and pipelines a client sends.
type sendCounter struct{ n *atomic.Int64 }

func (sendCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (s sendCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s.n.Add(1)
		return next(ctx, cmd)
	}
}

func (s sendCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		s.n.Add(1)
		return next(ctx, cmds)
	}
}

func TestDurationsInWords(t *testing.T) {
	for _, tt := range []struct {
		d        time.Duration
		say, per string
	}{
		{time.Minute, "1 minute", "minute"},
		{15 * time.Minute, "15 minutes", "15 minutes"},
		{15 * time.Second, "15 seconds", "15 seconds"},
		{time.Hour, "1 hour", "hour"},
		{24 * time.Hour, "24 hours", "24 hours"},
		{30 * 24 * time.Hour, "30 days", "30 days"},
		{90 * time.Second, "90 seconds", "90 seconds"},
	} {
		if got := ratelimit.DescribeDuration(tt.d); got != tt.say {
			t.Errorf("DescribeDuration(%v) = %q, want %q", tt.d, got, tt.say)
		}
		if got := ratelimit.PerWindow(tt.d); got != tt.per {
			t.Errorf("PerWindow(%v) = %q, want %q", tt.d, got, tt.per)
		}
	}
}
