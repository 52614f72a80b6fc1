// Package platformtest hands tests an isolated Redis: a fresh miniredis, or,
// when DOMAIND_TEST_REDIS_URL is set, a database number of that server
// reserved for the test and flushed before and after.
package platformtest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Redis is one test's Redis.
type Redis struct {
	Client redis.UniversalClient
	Opt    asynq.RedisClientOpt
	// Mini is the in-process server, nil on a real Redis. Tests that drive
	// time use it (FastForward) and skip what only a real server can show.
	Mini *miniredis.Miniredis
	// URL is a redis:// URL other processes can use.
	URL string
}

// NewRedis returns a Redis only this test uses.
func NewRedis(tb testing.TB) *Redis {
	tb.Helper()
	base := os.Getenv("DOMAIND_TEST_REDIS_URL")
	if base == "" {
		m := miniredis.RunT(tb)
		opt := asynq.RedisClientOpt{Addr: m.Addr()}
		return newRedis(tb, opt, m, "redis://"+m.Addr())
	}
	o, err := redis.ParseURL(base)
	if err != nil {
		tb.Fatalf("DOMAIND_TEST_REDIS_URL: %v", err)
	}
	db := reserveDB(tb, o)
	opt := asynq.RedisClientOpt{Addr: o.Addr, Username: o.Username, Password: o.Password, DB: db}
	r := newRedis(tb, opt, nil, fmt.Sprintf("redis://%s/%d", o.Addr, db))
	if err := r.Client.FlushDB(context.Background()).Err(); err != nil {
		tb.Fatalf("flush redis db %d: %v", db, err)
	}
	tb.Cleanup(func() { r.Client.FlushDB(context.Background()) })
	return r
}

func newRedis(tb testing.TB, opt asynq.RedisClientOpt, m *miniredis.Miniredis, url string) *Redis {
	c := opt.MakeRedisClient().(redis.UniversalClient)
	tb.Cleanup(func() { c.Close() })
	return &Redis{Client: c, Opt: opt, Mini: m, URL: url}
}

// reserveDB takes a free database number 1..15 with a lock key in database 0,
// so test packages running in parallel never share one.
func reserveDB(tb testing.TB, o *redis.Options) int {
	tb.Helper()
	ctx := context.Background()
	lock := redis.NewClient(&redis.Options{Addr: o.Addr, Username: o.Username, Password: o.Password})
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		for db := 1; db <= 15; db++ {
			key := fmt.Sprintf("domaind:test:db:%d", db)
			ok, err := lock.SetNX(ctx, key, os.Getpid(), 30*time.Minute).Result()
			if err != nil {
				tb.Fatalf("reserve redis db: %v", err)
			}
			if ok {
				tb.Cleanup(func() { lock.Del(ctx, key); lock.Close() })
				return db
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Fatalf("no free redis database number in 1..15")
	return 0
}
