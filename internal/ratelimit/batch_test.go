package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/testtool"
)

// blackHole accepts connections and never answers until closed.
type blackHole struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newBlackHole(tb testing.TB) *blackHole {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	h := &blackHole{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
		}
	}()
	tb.Cleanup(h.close)
	return h
}

func (h *blackHole) close() {
	h.ln.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.conns {
		c.Close()
	}
}

// A call queued behind a round trip that hangs leaves as soon as its
// caller gives up, and is withdrawn: it will not spend a unit later.
func TestQueuedCallWithdrawsWhenItsCallerGivesUp(t *testing.T) {
	hole := newBlackHole(t)
	rdb := redis.NewClient(&redis.Options{Addr: hole.ln.Addr().String(), MaxRetries: -1})
	defer rdb.Close()
	l := New(rdb, time.Now)
	p := PerMinute("hang", 10)

	senderDone := make(chan error, 1)
	go func() {
		_, err := l.Allow(context.Background(), p, "first")
		senderDone <- err
	}()
	testtool.WaitFor(t, "the first call is being sent", func() bool {
		l.batch.mu.Lock()
		defer l.batch.mu.Unlock()
		return l.batch.sending
	})

	ctx, cancel := context.WithCancel(context.Background())
	queuedDone := make(chan error, 1)
	go func() {
		_, err := l.Allow(ctx, p, "second")
		queuedDone <- err
	}()
	queued := func() int {
		l.batch.mu.Lock()
		defer l.batch.mu.Unlock()
		return len(l.batch.queue)
	}
	testtool.WaitFor(t, "the second call is queued", func() bool { return queued() == 1 })
	cancel()
	if err := <-queuedDone; !errors.Is(err, context.Canceled) {
		t.Errorf("queued call = %v, want context.Canceled", err)
	}
	if n := queued(); n != 0 {
		t.Errorf("%d calls still queued after their caller left, want 0", n)
	}

	hole.close() // the hung round trip fails now
	if err := <-senderDone; err == nil {
		t.Error("the call sent to a Redis that never answered succeeded")
	}
}

// Callers that give up at random moments (queued, handed the turn, inside a
// batch), some with a group of calls (StatusAll), never strand the others:
// every call returns, those answered with their answers, and the batcher
// ends idle with nothing queued. One caller in ten waits as long as it
// takes, so that some are answered however slow the machine.
func TestCallersGivingUpAtRandomNeverStallTheBatcher(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	l := New(r.Client, time.Now)
	p, day := PerMinute("stress", 1_000_000), PerDay("day", 10)
	var wg sync.WaitGroup
	var ok, gaveUp atomic.Int64
	for i := range 2000 {
		wg.Go(func() {
			ctx := context.Background()
			if i%10 != 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(300_000))*time.Microsecond)
				defer cancel()
			}
			var err error
			if client := fmt.Sprint("c", i%50); i%3 == 0 {
				var rs []Result
				rs, err = l.StatusAll(ctx, Check{p, client}, Check{p, "other"}, Check{day, client})
				if err == nil && (len(rs) != 3 || rs[0].Limit != p.Limit || rs[1].Limit != p.Limit || rs[2].Limit != day.Limit) {
					t.Errorf("call %d: StatusAll answered %+v, want the three limits' status in order", i, rs)
				}
			} else {
				_, err = l.Allow(ctx, p, client)
			}
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, context.DeadlineExceeded):
				gaveUp.Add(1)
			default:
				t.Errorf("call %d: %v", i, err)
			}
		})
	}
	returned := make(chan struct{})
	go func() { wg.Wait(); close(returned) }()
	select {
	case <-returned:
	case <-time.After(time.Minute):
		t.Fatalf("callers still waiting after a minute: %d answered, %d gave up; the batcher stalled", ok.Load(), gaveUp.Load())
	}
	l.batch.mu.Lock()
	defer l.batch.mu.Unlock()
	if l.batch.sending || len(l.batch.queue) != 0 {
		t.Errorf("after every caller returned: sending %v, %d queued; want idle and empty", l.batch.sending, len(l.batch.queue))
	}
	t.Logf("%d calls answered, %d callers gave up", ok.Load(), gaveUp.Load())
	if ok.Load() == 0 || gaveUp.Load() == 0 {
		t.Errorf("answered %d, gave up %d: the test needs both to mean anything", ok.Load(), gaveUp.Load())
	}
}
