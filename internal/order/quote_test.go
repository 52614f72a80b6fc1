package order

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
)

// Re-quoting extends a partner's hold by the TTL, but to no more than
// MaxHold from its first quote; after that the partner may hold the name
// again only MaxHold later, and others may meanwhile.
func TestRequotingExtendsAHoldUpToMaxHold(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.list(t, "heldlong.com", 10_000)
	start := w.now
	quoteAt := func(after time.Duration) (Quote, error) {
		w.now = start.Add(after)
		return w.s.Quote(ctx, "prt_a", models.EnvSandbox, "heldlong.com")
	}
	first, err := quoteAt(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ at, until time.Duration }{
		{8 * time.Minute, 18 * time.Minute},  // live: extended by the TTL
		{16 * time.Minute, 26 * time.Minute}, // again
		{24 * time.Minute, 30 * time.Minute}, // capped at MaxHold from the first quote
		{29 * time.Minute, 30 * time.Minute},
	} {
		q, err := quoteAt(step.at)
		if err != nil || q.QuoteID != first.QuoteID || !q.ExpiresAt.Equal(start.Add(step.until)) {
			t.Errorf("quote at +%v = %+v, %v; want %s until +%v", step.at, q, err, first.QuoteID, step.until)
		}
		if c, err := w.s.ParseQuoteToken(q.QuoteToken); err != nil || !c.ExpiresAt.Equal(q.ExpiresAt) {
			t.Errorf("the token at +%v says %v, want %v", step.at, c.ExpiresAt, q.ExpiresAt)
		}
	}
	var l models.SandboxListing
	w.db.Take(&l, "domain = ?", "heldlong.com")
	if l.LockedUntil == nil || !l.LockedUntil.Equal(start.Add(MaxHold)) {
		t.Errorf("the listing is held until %v, want %v", l.LockedUntil, start.Add(MaxHold))
	}

	_, err = quoteAt(31 * time.Minute)
	if e := wantCode(t, "re-quoting after MaxHold", err, fault.RateLimited); e.RetryAfter != 29*time.Minute || !strings.Contains(e.Message, "quote it again from") {
		t.Errorf("refusal = %+v, want a retry 29 minutes on", e)
	}
	if _, err := w.s.Quote(ctx, "prt_b", models.EnvSandbox, "heldlong.com"); err != nil {
		t.Errorf("another partner after the hold: %v", err)
	}
	w.now = start.Add(61 * time.Minute) // prt_b's hold lapsed at +41; prt_a may again
	if q, err := w.s.Quote(ctx, "prt_a", models.EnvSandbox, "heldlong.com"); err != nil || q.QuoteID == first.QuoteID || !q.ExpiresAt.Equal(w.now.Add(10*time.Minute)) {
		t.Errorf("a new hold an hour on = %+v, %v", q, err)
	}

	// A short break does not start a new hold: quoting again within MaxHold
	// of the first quote, after one lapsed, keeps the first quote's bound.
	w.list(t, "lapsed.com", 10_000)
	w.now = start
	if _, err := w.s.Quote(ctx, "prt_c", models.EnvSandbox, "lapsed.com"); err != nil {
		t.Fatal(err)
	}
	w.now = start.Add(25 * time.Minute)
	if q, err := w.s.Quote(ctx, "prt_c", models.EnvSandbox, "lapsed.com"); err != nil || !q.ExpiresAt.Equal(start.Add(MaxHold)) {
		t.Errorf("a quote after a lapse = %+v, %v; want it held until %v", q, err, start.Add(MaxHold))
	}
}

// A partner holds at most QuoteHoldLimit names at once: the next quote is
// rate_limited until the first hold lapses, its own quotes again are not
// refused, and a quote used by an order frees its place. Quoting many
// names at once holds exactly the limit.
func TestAPartnerHoldsAtMostTheLimit(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	limit := DefaultQuoteHoldLimit
	for i := range limit + 10 {
		w.list(t, fmt.Sprintf("held%02d.com", i), 10_000)
	}
	start := w.now
	var mu sync.Mutex
	var quoted []Quote
	var refused []*fault.Error
	var wg sync.WaitGroup
	for i := range limit + 5 {
		wg.Go(func() {
			q, err := w.s.Quote(ctx, "prt_a", models.EnvSandbox, fmt.Sprintf("held%02d.com", i))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				refused = append(refused, wantCode(t, "a quote past the limit", err, fault.RateLimited))
				return
			}
			quoted = append(quoted, q)
		})
	}
	wg.Wait()
	if len(quoted) != limit || len(refused) != 5 {
		t.Fatalf("%d quotes held, %d refused; want %d and 5", len(quoted), len(refused), limit)
	}
	for _, e := range refused {
		if e.RetryAfter != 10*time.Minute {
			t.Errorf("refusal %+v, want a retry when the first hold lapses, in 10 minutes", e)
		}
	}
	w.now = start.Add(time.Minute)
	if _, err := w.s.Quote(ctx, "prt_a", models.EnvSandbox, quoted[0].Domain); err != nil {
		t.Errorf("a held name quoted again at the limit: %v", err)
	}
	if _, err := w.s.Quote(ctx, "prt_b", models.EnvSandbox, "held29.com"); err != nil {
		t.Errorf("another partner under its own limit: %v", err)
	}
	if _, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder(quoted[1].Domain, 10_000, quoted[1].QuoteID)); err != nil {
		t.Fatal(err)
	}
	var free string
	for i := range limit + 5 {
		d := fmt.Sprintf("held%02d.com", i)
		var l models.SandboxListing
		w.db.Take(&l, "domain = ?", d)
		if l.LockedUntil == nil && l.SoldAt == nil {
			free = d
			break
		}
	}
	if _, err := w.s.Quote(ctx, "prt_a", models.EnvSandbox, free); err != nil {
		t.Errorf("a quote after an order used one of the holds: %v", err)
	}
}
