package knownaddr

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/platform/platformtest"
)

// newBook returns a Book on a Redis of the test's own, and the clock the
// Book reads, which the test moves.
func newBook(t *testing.T) (*Book, *platformtest.Redis, *time.Time) {
	t.Helper()
	r := platformtest.NewRedis(t)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	return New(r.Client, func() time.Time { return now }), r, &now
}

// A key id knows the addresses it authenticated from, for TTL after the
// last time, and no other key id's.
func TestKnownAfterRemember(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, _, now := newBook(t)
	known := func(keyID, address string) bool {
		t.Helper()
		ok, err := b.Known(ctx, keyID, address)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	if known("pk_live_a", "198.51.100.1") {
		t.Fatal("an address is known before it authenticated")
	}
	for _, address := range []string{"198.51.100.1", "unknown", ""} {
		if err := b.Remember(ctx, "pk_live_a", address); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, keyID, address string
		want                 bool
	}{
		{"the address", "pk_live_a", "198.51.100.1", true},
		{"another address", "pk_live_a", "198.51.100.2", false},
		{"another key id", "pk_live_b", "198.51.100.1", false},
		{"no address read", "pk_live_a", "unknown", false},
	}
	for _, c := range cases {
		if got := known(c.keyID, c.address); got != c.want {
			t.Errorf("%s: Known(%q, %q) = %v, want %v", c.name, c.keyID, c.address, got, c.want)
		}
	}

	*now = now.Add(TTL - time.Second)
	if !known("pk_live_a", "198.51.100.1") {
		t.Error("the address is forgotten before TTL has passed")
	}
	*now = now.Add(time.Second)
	if known("pk_live_a", "198.51.100.1") {
		t.Error("the address is still known TTL after it authenticated")
	}
}

// A key id keeps the PerKey addresses that authenticated last.
func TestAKeyIDKeepsItsNewestAddresses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, r, now := newBook(t)
	address := func(i int) string { return fmt.Sprintf("192.0.2.%d", i+1) }
	for i := range PerKey + 5 {
		*now = now.Add(time.Second)
		if err := b.Remember(ctx, "pk_live_a", address(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.Client.ZCard(ctx, redisKey("pk_live_a")).Val(); n != PerKey {
		t.Errorf("%d addresses kept, want %d", n, PerKey)
	}
	for i, want := range map[int]bool{0: false, 4: false, 5: true, PerKey + 4: true} {
		if got, err := b.Known(ctx, "pk_live_a", address(i)); err != nil || got != want {
			t.Errorf("Known(address %d) = %v, %v; want %v", i, got, err, want)
		}
	}
	if ttl := r.Client.TTL(ctx, redisKey("pk_live_a")).Val(); ttl <= TTL-time.Minute || ttl > TTL {
		t.Errorf("the addresses expire in %v, want %v", ttl, TTL)
	}
}

// A process writes an address it recorded again only rewriteAfter later
// (a request costs Redis nothing but the first of its address in that
// time), and forgets it then.
func TestRememberWritesAnAddressOnceInAWhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, r, now := newBook(t)
	written := func() float64 {
		t.Helper()
		at, err := r.Client.ZScore(ctx, redisKey("pk_live_a"), "198.51.100.1").Result()
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	if err := b.Remember(ctx, "pk_live_a", "198.51.100.1"); err != nil {
		t.Fatal(err)
	}
	first := written()
	*now = now.Add(rewriteAfter - time.Second)
	if err := b.Remember(ctx, "pk_live_a", "198.51.100.1"); err != nil {
		t.Fatal(err)
	}
	if got := written(); got != first {
		t.Errorf("written again %v after: score %v, want %v", rewriteAfter-time.Second, got, first)
	}
	*now = now.Add(time.Second)
	if err := b.Remember(ctx, "pk_live_a", "198.51.100.1"); err != nil {
		t.Fatal(err)
	}
	if got, want := written(), float64(now.Unix()); got != want {
		t.Errorf("not written again %v after: score %v, want %v", rewriteAfter, got, want)
	}

	// Pairs recorded rewriteAfter ago leave the process's memory.
	*now = now.Add(rewriteAfter)
	if err := b.Remember(ctx, "pk_live_a", "198.51.100.2"); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	n := len(b.written)
	b.mu.Unlock()
	if n != 1 {
		t.Errorf("the process holds %d pairs, want 1: the one recorded now", n)
	}
}

// A write that failed is tried again by the next request of its address,
// and a failed look-up is an error, not "unknown": Redis refuses every
// command for a while (miniredis's injected error, on any test run).
func TestRememberTriesAgainAfterAFailedWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	b := New(rdb, func() time.Time { return now })

	m.SetError("ERR injected outage")
	if err := b.Remember(ctx, "pk_live_a", "198.51.100.1"); err == nil {
		t.Fatal("Remember during the outage = nil error")
	}
	if _, err := b.Known(ctx, "pk_live_a", "198.51.100.1"); err == nil {
		t.Error("Known during the outage = nil error")
	}
	m.SetError("")
	now = now.Add(time.Second)
	if err := b.Remember(ctx, "pk_live_a", "198.51.100.1"); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Known(ctx, "pk_live_a", "198.51.100.1"); err != nil || !ok {
		t.Errorf("Known after the outage = %v, %v; want true: the write that failed was not tried again", ok, err)
	}
}
