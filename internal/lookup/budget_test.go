package lookup

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/ratelimit"
)

func TestServerBudgetIsPerServerForEveryone(t *testing.T) {
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
