package nonce

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/hmacsig"
	"github.com/domaind/domaind/internal/platform/platformtest"
)

func TestClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := platformtest.NewRedis(t)
	s := NewStore(r.Client, TTL)
	const nonce = "3f1c9a52-7d4e-4b8a-9e21-5c6d7e8f9a0b"

	claims := []struct {
		name, keyID, nonce string
		want               bool
	}{
		{"first use", "pk_live_1", nonce, true},
		{"replay", "pk_live_1", nonce, false},
		{"replay again", "pk_live_1", nonce, false},
		{"same nonce, other credential", "pk_test_1", nonce, true},
		{"other nonce", "pk_live_1", "a7b8c9d0-1e2f-4a3b-8c4d-5e6f7a8b9c0d", true},
		{"key id prefix cannot collide", "pk_live", "1:" + nonce, true},
	}
	for _, c := range claims {
		fresh, err := s.Claim(ctx, c.keyID, c.nonce)
		if err != nil || fresh != c.want {
			t.Errorf("%s: Claim(%q, %q) = %v, %v; want %v", c.name, c.keyID, c.nonce, fresh, err, c.want)
		}
	}

	ttl, err := r.Client.TTL(ctx, redisKey("pk_live_1", nonce)).Result()
	if err != nil || ttl <= TTL-5*time.Second || ttl > TTL {
		t.Errorf("TTL of the nonce key = %v, %v; want about %v", ttl, err, TTL)
	}
}

func TestClaimForgetsAfterTTL(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	if r.Mini == nil {
		t.Skip("needs miniredis to move time; the TTL itself is checked in TestClaim")
	}
	ctx := context.Background()
	s := NewStore(r.Client, TTL)
	if fresh, err := s.Claim(ctx, "k", "n"); !fresh || err != nil {
		t.Fatalf("Claim = %v, %v", fresh, err)
	}
	r.Mini.FastForward(TTL - time.Second)
	if fresh, err := s.Claim(ctx, "k", "n"); fresh || err != nil {
		t.Errorf("Claim a second before the TTL = %v, %v; want false", fresh, err)
	}
	r.Mini.FastForward(time.Second)
	if fresh, err := s.Claim(ctx, "k", "n"); !fresh || err != nil {
		t.Errorf("Claim after the TTL = %v, %v; want true", fresh, err)
	}
}

// Of many requests racing with one nonce, exactly one passes.
func TestClaimConcurrent(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	s := NewStore(r.Client, TTL)
	var wins, errs atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 50 {
		wg.Go(func() {
			<-start
			fresh, err := s.Claim(context.Background(), "pk_live_1", "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f")
			if err != nil {
				errs.Add(1)
			}
			if fresh {
				wins.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if wins.Load() != 1 || errs.Load() != 0 {
		t.Errorf("%d of 50 claims won, %d failed; want exactly 1 win, no failures", wins.Load(), errs.Load())
	}
}

func TestClaimRefusesBadNonces(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	s := NewStore(r.Client, TTL)
	tests := []struct{ name, nonce, want string }{
		{"empty", "", "empty"},
		{"129 characters", strings.Repeat("a", 129), "at most 128"},
		{"space", "a b", "not printable"},
		{"newline", "a\nb", "not printable"},
		{"DEL", "a\x7f", "not printable"},
		{"non-ASCII", "nonce-é", "not printable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fresh, err := s.Claim(context.Background(), "pk_live_1", tt.nonce)
			if fresh || !errors.Is(err, hmacsig.ErrBadNonce) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Claim(%q) = %v, %v; want hmacsig.ErrBadNonce saying %q", tt.nonce, fresh, err, tt.want)
			}
		})
	}
	if n, err := r.Client.DBSize(context.Background()).Result(); err != nil || n != 0 {
		t.Errorf("refused nonces left %d keys (%v); want none", n, err)
	}
	long := strings.Repeat("~", 128)
	if fresh, err := s.Claim(context.Background(), "pk_live_1", long); !fresh || err != nil {
		t.Errorf("Claim(128 characters) = %v, %v; want fresh", fresh, err)
	}
}

// A Redis that cannot answer fails the claim: the request is refused, never
// let through unchecked.
func TestClaimFailsClosed(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	s := NewStore(r.Client, TTL)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if fresh, err := s.Claim(ctx, "pk_live_1", "n"); fresh || err == nil {
		t.Errorf("Claim on a cancelled context = %v, %v; want an error", fresh, err)
	}
}

// A nonce outlives every moment its request's timestamp can pass: from the
// first second the timestamp is accepted to the end of the last.
func TestNonceOutlivesTheTimestampWindow(t *testing.T) {
	t.Parallel()
	ts := time.Unix(1_800_000_000, 0)
	passes := func(now time.Time) bool {
		_, err := hmacsig.ParseTimestamp(strconv.FormatInt(ts.Unix(), 10), now, hmacsig.MaxSkew)
		return err == nil
	}
	first, last := ts, ts
	for passes(first.Add(-time.Second)) {
		first = first.Add(-time.Second)
	}
	for passes(last.Add(time.Second)) {
		last = last.Add(time.Second)
	}
	// Accepted from first (the earliest claim) to the end of second last.
	window := last.Add(time.Second - time.Nanosecond).Sub(first)
	if TTL <= window {
		t.Errorf("TTL %v, but a request passes the timestamp check for %v: replayable at the end", TTL, window)
	}
}
