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
	m, stop, err := StartEmbeddedRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
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
