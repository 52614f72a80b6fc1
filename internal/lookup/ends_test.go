package lookup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/platform/platformtest"
)

// newProxiedCache returns a Cache whose Redis connections pass through a
// proxy the test can cut, and a client to announce on directly.
func newProxiedCache(t *testing.T) (*Cache, *platformtest.Proxy, redis.UniversalClient) {
	t.Helper()
	r := platformtest.NewRedis(t)
	opt := r.Server(t)
	proxy := platformtest.NewProxy(t, opt.Addr)
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr, Username: opt.Username, Password: opt.Password, DB: opt.DB,
		MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	c := NewCache(rdb, slog.New(slog.DiscardHandler))
	t.Cleanup(c.Close)
	return c, proxy, r.Client
}

// waitEnded fails t unless s is woken within a deadline (its own Wait
// would only return at the end of every).
func waitEnded(t *testing.T, s *Subscription, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Wait(ctx, time.Hour); err != nil {
		t.Fatalf("%s: not woken: %v", what, err)
	}
}

func TestWaitersShareOneSubscription(t *testing.T) {
	t.Parallel()
	c, proxy, announcer := newProxiedCache(t)
	ctx := context.Background()
	subs := make([]*Subscription, 50)
	for i := range subs {
		s, err := c.Subscribe(ctx, fmt.Sprintf("lk-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		subs[i] = s
	}
	// Every waiter of the process listens on the one connection.
	if n := proxy.Accepted(); n != 1 {
		t.Fatalf("50 waiters opened %d connections to Redis, want 1", n)
	}
	if n := len(c.ends.waiters); n != 50 {
		t.Fatalf("%d lookups waited for, want 50", n)
	}

	if err := announcer.Publish(ctx, doneChannel("lk-7"), "done").Err(); err != nil {
		t.Fatal(err)
	}
	waitEnded(t, subs[7], "lk-7's waiter")
	// The one listener handles announcements in order: the one above woke
	// lk-7 alone.
	for i, s := range subs {
		if len(s.ended) != 0 {
			t.Errorf("lk-%d's waiter was woken by lk-7's end", i)
		}
	}

	// Cache.Finish announces too, and a closed waiter is forgotten.
	subs[3].Close()
	if err := c.Finish(ctx, Answer{LookupID: "lk-9", Domain: "example.com", Found: true}); err != nil {
		t.Fatal(err)
	}
	waitEnded(t, subs[9], "lk-9's waiter")
	if _, ok := c.ends.waiters["lk-3"]; ok {
		t.Error("a closed waiter is still registered")
	}
}

// While the subscription is cut, announcements are lost: when it is made
// again, every waiter is woken to look at its lookup, and later
// announcements arrive as before.
func TestWaitersAreWokenWhenTheSubscriptionComesBack(t *testing.T) {
	t.Parallel()
	c, proxy, announcer := newProxiedCache(t)
	ctx := context.Background()
	before, err := c.Subscribe(ctx, "lk-before")
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()

	proxy.Stop()
	announcer.Publish(ctx, doneChannel("lk-before"), "done") // lost: nobody listens
	proxy.Start(t)
	waitEnded(t, before, "a waiter from before the cut")

	after, err := c.Subscribe(ctx, "lk-after")
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if err := announcer.Publish(ctx, doneChannel("lk-after"), "done").Err(); err != nil {
		t.Fatal(err)
	}
	waitEnded(t, after, "a waiter from after the cut")
}

func TestSubscribeFailsWithoutRedisAndAfterClose(t *testing.T) {
	t.Parallel()
	c, proxy, _ := newProxiedCache(t)
	proxy.Stop()
	if _, err := c.Subscribe(context.Background(), "lk-1"); err == nil {
		t.Error("Subscribe succeeded with Redis out of reach")
	}
	if n := len(c.ends.waiters); n != 0 {
		t.Errorf("a failed Subscribe left %d waiters", n)
	}

	proxy.Start(t)
	c.Close()
	if _, err := c.Subscribe(context.Background(), "lk-2"); !errors.Is(err, errClosed) {
		t.Errorf("Subscribe after Close = %v, want errClosed", err)
	}
}
