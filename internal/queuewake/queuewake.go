// Package queuewake lets idle asynq workers wait for work on Redis pub/sub
// instead of polling their queues.
//
// An asynq server whose queues are empty sleeps TaskCheckInterval and tries
// each queue again, one Lua script per queue: a short interval makes every
// idle worker a steady load on Redis (25 ms over six queues is about 240
// scripts and 660 commands a second per worker process), a long one delays
// every task enqueued while the worker sleeps. Here producers announce the
// queues they enqueued to (Notify, one PUBLISH per queue per batch), and a
// Gate installed on the worker's Redis client answers "empty" without
// asking Redis for a queue it knows to be empty: one that was found empty
// and announced nothing since, checked less than the recheck interval ago.
// While every queue is known empty the dequeue waits, on the announcement
// or the next recheck, so an idle worker costs Redis a few commands a
// second and picks a task up within a round trip of its announcement.
//
// Announcements are hints. A task enqueued without one (by the scheduler,
// the forwarder of retries and scheduled tasks, or asynqmon) is found at
// the next recheck; an announcement lost (the subscription reconnecting)
// counts as one for every queue. Pub/sub channels span Redis's database
// numbers, so workers on another database of the same server may be woken
// for nothing: one extra dequeue each.
package queuewake

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Channel is where producers announce queues that have new tasks.
const Channel = "domaind:queues:wake"

// Notify announces that tasks were enqueued to queues.
func Notify(ctx context.Context, rdb redis.UniversalClient, queues ...string) error {
	if len(queues) == 1 {
		return rdb.Publish(ctx, Channel, queues[0]).Err()
	}
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, q := range queues {
			p.Publish(ctx, Channel, q)
		}
		return nil
	})
	return err
}

// Gate holds back an asynq server's dequeues of queues known to be empty.
// Install Hook on the Redis client the server is made from
// (asynq.NewServerFromRedisClient), Listen on it, and Close the gate before
// shutting the server down, so a waiting dequeue does not hold the
// shutdown up.
type Gate struct {
	recheck time.Duration
	ps      *redis.PubSub
	done    chan struct{}
	wg      sync.WaitGroup

	mu     sync.Mutex
	queues map[string]*queueState
	woken  chan struct{} // closed at the next announcement
	closed bool
}

// queueState is what the gate knows of one queue.
type queueState struct {
	gen       uint64    // announcements so far
	emptyGen  uint64    // gen when the last dequeue that found it empty started
	empty     bool      // the last dequeue found it empty
	checkedAt time.Time // when the last dequeue that reached Redis started
}

// NewGate returns a gate for the queues named that waits at most recheck
// between two dequeues of a queue that reach Redis. Until Listen it hears no
// announcement.
func NewGate(queues []string, recheck time.Duration) *Gate {
	g := &Gate{recheck: recheck, done: make(chan struct{}), queues: map[string]*queueState{}, woken: make(chan struct{})}
	for _, q := range queues {
		g.queues[q] = &queueState{}
	}
	return g
}

// Listen subscribes to the announcements on rdb until Close.
func (g *Gate) Listen(rdb redis.UniversalClient) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ps != nil || g.closed {
		return
	}
	g.ps = rdb.Subscribe(context.Background(), Channel)
	g.wg.Go(g.listen)
}

// listen applies announcements until Close. A (re)subscription counts as
// an announcement for every queue: whatever was sent while the connection
// was down is lost.
func (g *Gate) listen() {
	for {
		msg, err := g.ps.Receive(context.Background())
		switch m := msg.(type) {
		case *redis.Message:
			g.wake(m.Payload)
		case *redis.Subscription:
			g.wake("")
		}
		if err != nil {
			select {
			case <-g.done:
				return
			case <-time.After(100 * time.Millisecond): // go-redis reconnects at the next Receive
			}
		}
	}
}

// wake records an announcement for queue, or for every queue when queue is "".
func (g *Gate) wake(queue string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for name, q := range g.queues {
		if queue == "" || queue == name {
			q.gen++
		}
	}
	close(g.woken)
	g.woken = make(chan struct{})
}

// Close stops waiting dequeues and the subscription. Known-empty queues
// are still answered empty until their recheck.
func (g *Gate) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	close(g.done)
	ps := g.ps
	g.mu.Unlock()
	if ps == nil {
		return nil
	}
	err := ps.Close()
	g.wg.Wait()
	return err
}

// Hook is the go-redis hook that gates the server's dequeues.
func (g *Gate) Hook() redis.Hook { return hook{g} }

type hook struct{ g *Gate }

func (h hook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		q := dequeuedQueue(cmd)
		if q == "" {
			return next(ctx, cmd)
		}
		gen, ask := h.g.admit(q)
		if !ask {
			cmd.SetErr(redis.Nil)
			return redis.Nil
		}
		err := next(ctx, cmd)
		h.g.asked(q, gen, err == redis.Nil)
		return err
	}
}

// admit reports whether a dequeue of queue is to reach Redis, and the
// queue's announcement count as it starts. While every queue is known
// empty it first waits for an announcement or the next recheck.
func (g *Gate) admit(queue string) (gen uint64, ask bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	q, ok := g.queues[queue]
	if !ok {
		return 0, true
	}
	for waited := false; ; waited = true {
		now := time.Now()
		if !g.knownEmpty(q, now) {
			q.checkedAt = now
			return q.gen, true
		}
		if waited || g.closed {
			return 0, false
		}
		next := q.checkedAt.Add(g.recheck)
		for _, o := range g.queues {
			if !g.knownEmpty(o, now) {
				return 0, false // another queue of this pass is to be asked
			}
			if t := o.checkedAt.Add(g.recheck); t.Before(next) {
				next = t
			}
		}
		woken := g.woken
		g.mu.Unlock()
		t := time.NewTimer(time.Until(next))
		select {
		case <-woken:
		case <-t.C:
		case <-g.done:
		}
		t.Stop()
		g.mu.Lock()
	}
}

func (g *Gate) knownEmpty(q *queueState, now time.Time) bool {
	return q.empty && q.emptyGen == q.gen && now.Sub(q.checkedAt) < g.recheck
}

// asked records the outcome of a dequeue that reached Redis: found empty
// or not, as of announcement gen.
func (g *Gate) asked(queue string, gen uint64, empty bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if q, ok := g.queues[queue]; ok {
		q.empty, q.emptyGen = empty, gen
	}
}

// dequeuedQueue returns the queue an asynq dequeue script run is for, or
// "" for any other command. asynq (v0.26) dequeues with one script per
// queue whose keys are the queue's pending, paused, active and lease keys.
func dequeuedQueue(cmd redis.Cmder) string {
	args := cmd.Args()
	if name := cmd.Name(); (name != "evalsha" && name != "eval") || len(args) < 7 {
		return ""
	}
	if n, ok := args[2].(int); !ok || n != 4 {
		return ""
	}
	pending, _ := args[3].(string)
	paused, _ := args[4].(string)
	prefix, ok := strings.CutSuffix(pending, "pending")
	if !ok || paused != prefix+"paused" {
		return ""
	}
	q, ok := strings.CutPrefix(prefix, "asynq:{")
	if !ok {
		return ""
	}
	q, ok = strings.CutSuffix(q, "}:")
	if !ok {
		return ""
	}
	return q
}
