package lookup

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/ratelimit"
)

func TestServerBudgetIsPerServerForEveryone(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	now := func() time.Time { return time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC) }
	policy := ratelimit.PerMinute("registry-server", 3)
	// Two workers, one budget: it lives in Redis.
	a := &ServerBudget{Limiter: ratelimit.New(r.Client, now), Policy: policy}
	b := &ServerBudget{Limiter: ratelimit.New(r.Client, now), Policy: policy}
	ctx := context.Background()
	for i, w := range []*ServerBudget{a, b, a} {
		if err := w.Take(ctx, "rdap.verisign.com"); err != nil {
			t.Fatalf("query %d = %v, want allowed", i+1, err)
		}
	}
	if err := b.Take(ctx, "rdap.verisign.com"); !errors.Is(err, ErrServerBusy) {
		t.Errorf("4th query to the server = %v, want ErrServerBusy", err)
	}
	if err := b.Take(ctx, "whois.nic.io:43"); err != nil {
		t.Errorf("another server = %v, want allowed", err)
	}
}

// With Redis gone, each process spends its own share of a server's budget
// (a quarter), says so once a minute in the log, and reports each query to
// Degraded; the share refills with time.
func TestServerBudgetFallsBackToTheProcessShare(t *testing.T) {
	t.Parallel()
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 50 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { down.Close() })
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	var log bytes.Buffer
	degraded := 0
	b := &ServerBudget{Limiter: ratelimit.New(down, func() time.Time { return now }), Policy: ratelimit.PerMinute("registry-server", 8),
		Log: slog.New(slog.NewTextHandler(&log, nil)), Degraded: func() { degraded++ }, Now: func() time.Time { return now }}
	ctx := context.Background()
	for i := range 2 {
		if err := b.Take(ctx, "rdap.verisign.com"); err != nil {
			t.Fatalf("query %d with Redis down = %v, want allowed by the process's share", i+1, err)
		}
	}
	if err := b.Take(ctx, "rdap.verisign.com"); !errors.Is(err, ErrServerBusy) {
		t.Errorf("3rd query = %v, want ErrServerBusy: the share is 8/4", err)
	}
	if err := b.Take(ctx, "whois.nic.io:43"); err != nil {
		t.Errorf("another server = %v, want its own share", err)
	}
	now = now.Add(30 * time.Second) // half a window: the share refills by half
	if err := b.Take(ctx, "rdap.verisign.com"); err != nil {
		t.Errorf("after 30 s = %v, want allowed again", err)
	}
	if degraded != 5 {
		t.Errorf("Degraded told of %d queries, want 5", degraded)
	}
	if n := strings.Count(log.String(), "Redis cannot count it"); n != 1 {
		t.Errorf("%d warnings in the log, want 1 a minute:\n%s", n, log.String())
	}
}
