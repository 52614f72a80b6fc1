package pubsub

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/testtool"
)

// events records what a listener tells, for a test to wait on.
type events struct {
	mu         sync.Mutex
	subscribed int
	failed     int
	messages   []string
}

func (e *events) handler() Handler {
	return Handler{
		Subscribed: func() { e.mu.Lock(); e.subscribed++; e.mu.Unlock() },
		Message:    func(m *redis.Message) { e.mu.Lock(); e.messages = append(e.messages, m.Payload); e.mu.Unlock() },
		Failed:     func(error) { e.mu.Lock(); e.failed++; e.mu.Unlock() },
	}
}

// waitFor waits, with testtool.WaitFor's deadline, until ok holds of e.
func (e *events) waitFor(t *testing.T, what string, ok func(e *events) bool) {
	t.Helper()
	testtool.WaitFor(t, what, func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return ok(e)
	})
}

// A listener delivers messages in order, hears the subscription made
// again after the connection is cut, and returns once stopped.
func TestListenThroughACutConnection(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	opt := r.Server(t)
	proxy := platformtest.NewProxy(t, opt.Addr)
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr, Username: opt.Username, Password: opt.Password, DB: opt.DB, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	var e events
	var wg sync.WaitGroup
	stop := Go(&wg, func(ctx context.Context) *redis.PubSub { return rdb.Subscribe(ctx, "pubsub-test") }, e.handler())
	returned := make(chan struct{})
	go func() { wg.Wait(); close(returned) }()

	e.waitFor(t, "subscription", func(e *events) bool { return e.subscribed == 1 })
	for _, m := range []string{"one", "two", "three"} {
		if err := r.Client.Publish(context.Background(), "pubsub-test", m).Err(); err != nil {
			t.Fatal(err)
		}
	}
	e.waitFor(t, "three messages", func(e *events) bool { return len(e.messages) == 3 })
	if got := e.messages; got[0] != "one" || got[1] != "two" || got[2] != "three" {
		t.Errorf("messages = %q, want one, two, three in order", got)
	}

	proxy.Stop()
	e.waitFor(t, "failed receive", func(e *events) bool { return e.failed > 0 })
	proxy.Start(t)
	e.waitFor(t, "second subscription", func(e *events) bool { return e.subscribed == 2 })
	if err := r.Client.Publish(context.Background(), "pubsub-test", "four").Err(); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, "a message after the cut", func(e *events) bool { return len(e.messages) == 4 })

	stop()
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		t.Fatal("the listener did not return after stop")
	}
}
