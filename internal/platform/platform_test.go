package platform

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The embedded Redis's TTLs count down although miniredis's own clock does
// not move: rate-limit windows, caches and idempotency records expire.
func TestEmbeddedRedisExpiresKeys(t *testing.T) {
	opt, stop, err := StartEmbeddedRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	rdb := opt.MakeRedisClient().(*redis.Client)
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Set(ctx, "short-lived", "x", time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		n, err := rdb.Exists(ctx, "short-lived").Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a key with a one-second TTL still exists after ten seconds")
		}
	}
}

// The embedded Redis listens on a loopback port any local user can reach:
// it answers only to its own process, which alone knows the password.
func TestEmbeddedRedisNeedsItsPassword(t *testing.T) {
	opt, stop, err := StartEmbeddedRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx := context.Background()
	if len(opt.Password) < 32 {
		t.Fatalf("password %d characters, want a long random one", len(opt.Password))
	}
	for _, pw := range []string{"", "guess"} {
		stranger := redis.NewClient(&redis.Options{Addr: opt.Addr, Password: pw})
		err := stranger.Set(ctx, "k", "v", 0).Err()
		stranger.Close()
		if err == nil {
			t.Errorf("a client with password %q wrote to the embedded Redis", pw)
		}
	}
	own := opt.MakeRedisClient().(*redis.Client)
	defer own.Close()
	if err := own.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Errorf("the process's own client: %v", err)
	}
}
