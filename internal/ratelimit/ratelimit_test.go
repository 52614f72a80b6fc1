package ratelimit_test

import (
	"context"
	"sync"
	"testing"
	"time"

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
	if res.RetryAfter != time.Second || res.Reset != time.Minute {
		t.Errorf("61st: retry after %v, reset %v; want 1s (GCRA frees one slot per second) and 1m", res.RetryAfter, res.Reset)
	}
	other, err := l.Allow(ctx, p, "203.0.113.8")
	if err != nil || !other.Allowed {
		t.Errorf("another client was refused (%v, %v): limits must be per client", other.Allowed, err)
	}
	clk.set(clk.now().Add(time.Second))
	if res, _ := l.Allow(ctx, p, "203.0.113.7"); !res.Allowed || res.Remaining != 0 {
		t.Errorf("a second later = %+v, want one request allowed again", res)
	}
	if res, _ := l.Allow(ctx, p, "203.0.113.7"); res.Allowed {
		t.Errorf("and one more in the same second = %+v, want refused", res)
	}
	clk.set(clk.now().Add(time.Minute))
	if res, _ := l.Allow(ctx, p, "203.0.113.7"); !res.Allowed || res.Remaining != 59 {
		t.Errorf("a minute later = %+v, want the full limit back", res)
	}
}

func TestDayQuotaResetsAtUTCMidnight(t *testing.T) {
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
	r := platformtest.NewRedis(t)
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	l := ratelimit.New(r.Client, clk.now)
	p := ratelimit.PerDay("whois", 2)
	ctx := context.Background()
	l.Allow(ctx, p, "c")
	l.Allow(ctx, p, "c")
	if err := l.Refund(ctx, p, "c"); err != nil {
		t.Fatal(err)
	}
	res, _ := l.Allow(ctx, p, "c")
	if !res.Allowed || res.Used != 2 {
		t.Errorf("after refund = %+v; want allowed, used 2", res)
	}
	// A refund never takes the counter below zero.
	l.Refund(ctx, ratelimit.PerDay("fresh", 2), "c")
	if res, _ := l.Allow(ctx, ratelimit.PerDay("fresh", 2), "c"); res.Used != 1 {
		t.Errorf("used after refund of nothing = %d, want 1", res.Used)
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
// without failing or double-spending the calls that met the loss.
func TestChecksSurviveAFlushedScriptCache(t *testing.T) {
	r := platformtest.NewRedis(t)
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

func TestPeekSpendsNothing(t *testing.T) {
	r := platformtest.NewRedis(t)
	l := ratelimit.New(r.Client, time.Now)
	p := ratelimit.Policy{Name: "failures", Kind: ratelimit.Rate, Limit: 3, Window: 15 * time.Minute}
	ctx := context.Background()
	for range 5 {
		if res, err := l.Peek(ctx, p, "acct"); err != nil || !res.Allowed || res.Remaining != 2 {
			t.Fatalf("peek = %+v, %v; want allowed with 2 left, unchanged", res, err)
		}
	}
	for range 3 {
		l.Allow(ctx, p, "acct")
	}
	if res, err := l.Peek(ctx, p, "acct"); err != nil || res.Allowed || res.RetryAfter <= 0 {
		t.Errorf("peek after the limit was spent = %+v, %v; want refused with a retry time", res, err)
	}
}
