// Package platformtest hands tests an isolated Redis: a fresh miniredis, or,
// when DOMAIND_TEST_REDIS_URL is set, a database number of that server
// reserved for the test and flushed before and after. On a Redis Cluster
// (a redis-cluster:// URL: it has only database 0) each test has the whole
// cluster, flushed before and after, and tests take it in turn. A test of
// what belongs to the whole server (its script cache) has a server of its
// own: NewServerRedis.
package platformtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/testtool"
)

// Redis is one test's Redis.
type Redis struct {
	Client redis.UniversalClient
	// Opt makes clients of the same Redis (asynq's servers and clients).
	Opt asynq.RedisConnOpt
	// Mini is the in-process server, nil on a real Redis. Tests that drive
	// time use it (FastForward) and skip what only a real server can show.
	Mini *miniredis.Miniredis
	// URL is a DOMAIND_REDIS_URL other processes can use.
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
	if strings.HasPrefix(base, "redis-cluster://") {
		return newCluster(tb, base)
	}
	o, err := redis.ParseURL(base)
	if err != nil {
		tb.Fatalf("DOMAIND_TEST_REDIS_URL: %v", err)
	}
	db := reserveDB(tb, o)
	opt := asynq.RedisClientOpt{Addr: o.Addr, Username: o.Username, Password: o.Password, DB: db}
	r := newRedis(tb, opt, nil, fmt.Sprintf("redis://%s/%d", o.Addr, db))
	r.Flush(tb)
	tb.Cleanup(func() { r.flush() })
	return r
}

// Flush empties the test's Redis, as a Redis that restarted without its
// data would be: its database on a shared server, every master of a
// cluster.
func (r *Redis) Flush(tb testing.TB) {
	tb.Helper()
	if err := r.flush(); err != nil {
		tb.Fatalf("flush redis: %v", err)
	}
}

func (r *Redis) flush() error {
	ctx := context.Background()
	if cc, ok := r.Client.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			return m.FlushAll(ctx).Err()
		})
	}
	return r.Client.FlushDB(ctx).Err()
}

// Server returns the options of the one Redis server, for a test that
// stands a Proxy between it and its clients; on a Redis Cluster, whose
// clients follow the cluster's own node addresses, it skips the test.
func (r *Redis) Server(tb testing.TB) asynq.RedisClientOpt {
	tb.Helper()
	opt, ok := r.Opt.(asynq.RedisClientOpt)
	if !ok {
		tb.Skip("a Redis Cluster's clients follow its nodes' addresses: no proxy can stand between them")
	}
	return opt
}

// newCluster gives tb the whole Redis Cluster at url, once no other test
// of any package holds it (a file lock on this machine), flushed before
// and after. A test that holds it already (or whose parent does) gets
// another client of it.
func newCluster(tb testing.TB, url string) *Redis {
	tb.Helper()
	opt, err := config.ParseRedisURL(url)
	if err != nil {
		tb.Fatalf("DOMAIND_TEST_REDIS_URL: %v", err)
	}
	if holding(tb) {
		return newRedis(tb, opt, nil, url)
	}
	lockCluster(tb)
	r := newRedis(tb, opt, nil, url)
	r.Flush(tb)
	tb.Cleanup(func() { r.flush() })
	return r
}

// holders are the names of the tests of this process that hold the
// cluster lock.
var holders = struct {
	sync.Mutex
	names map[string]bool
}{names: map[string]bool{}}

// holding says tb, or a test it is a subtest of, holds the cluster lock.
func holding(tb testing.TB) bool {
	holders.Lock()
	defer holders.Unlock()
	for name := tb.Name(); ; {
		if holders.names[name] {
			return true
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return false
		}
		name = name[:i]
	}
}

// lockCluster waits until tb holds the machine's cluster lock, and lets it
// go when tb ends.
func lockCluster(tb testing.TB) {
	tb.Helper()
	name := tb.Name()
	defer func() {
		holders.Lock()
		holders.names[name] = true
		holders.Unlock()
	}()
	tb.Cleanup(func() {
		holders.Lock()
		delete(holders.names, name)
		holders.Unlock()
	})
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "domaind-test-redis-cluster.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		tb.Fatalf("cluster lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		tb.Fatalf("cluster lock: %v", err)
	}
	tb.Cleanup(func() { f.Close() }) // closing the file lets the lock go
}

func newRedis(tb testing.TB, opt asynq.RedisConnOpt, m *miniredis.Miniredis, url string) *Redis {
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

// Keys returns the keys matching pattern, on every node of a Redis Cluster
// (a plain KEYS asks one).
func (r *Redis) Keys(tb testing.TB, pattern string) []string {
	tb.Helper()
	ctx := context.Background()
	cc, ok := r.Client.(*redis.ClusterClient)
	if !ok {
		keys, err := r.Client.Keys(ctx, pattern).Result()
		if err != nil {
			tb.Fatalf("keys %s: %v", pattern, err)
		}
		return keys
	}
	var mu sync.Mutex
	var keys []string
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		k, err := m.Keys(ctx, pattern).Result()
		mu.Lock()
		keys = append(keys, k...)
		mu.Unlock()
		return err
	})
	if err != nil {
		tb.Fatalf("keys %s: %v", pattern, err)
	}
	return keys
}

// NewServerRedis returns a Redis server only this test uses, for tests of
// what is the whole server's rather than a database's (the script cache):
// a fresh miniredis, or, when DOMAIND_TEST_REDIS_URL is set, a redis-server
// started for the test and stopped when it ends.
func NewServerRedis(tb testing.TB) *Redis {
	tb.Helper()
	if os.Getenv("DOMAIND_TEST_REDIS_URL") == "" {
		return NewRedis(tb)
	}
	bin := testtool.Path(tb, "the test needs a Redis server of its own", "redis-server")
	addr := testtool.FreeAddr(tb)
	_, port, _ := strings.Cut(addr, ":")
	srv := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := srv.Start(); err != nil {
		tb.Fatalf("start redis-server: %v", err)
	}
	tb.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	r := newRedis(tb, asynq.RedisClientOpt{Addr: addr}, nil, "redis://"+addr)
	testtool.WaitFor(tb, "the test's redis-server answers", func() bool {
		return r.Client.Ping(context.Background()).Err() == nil
	})
	return r
}
