package lookup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/pubsub"
)

// The end of a lookup is announced on a channel of its own (doneChannel),
// and the API waits for it. The waiters of a process share one pattern
// subscription to every such channel, made on the first Subscribe: a
// waiter costs an entry in a map, not a Redis connection of its own and
// the round trips of opening it.
//
// Announcements made while the subscription is down are lost. When it is
// made again, every waiter is woken to look at its lookup's row, as it
// does anyway every so often (Wait's every).

// endsPattern matches every lookup's doneChannel.
const endsPattern = "lookup:done:*"

// endsReadyWait bounds how long Subscribe waits for the shared
// subscription, which is down only while Redis cannot be reached.
const endsReadyWait = 2 * time.Second

// errClosed is Subscribe's error after the Cache was closed.
var errClosed = errors.New("the lookup cache is closed")

// ends is a Cache's shared subscription to the ends of lookups and the
// waiters it wakes.
type ends struct {
	log *slog.Logger

	mu      sync.Mutex
	waiters map[string][]*Subscription // by lookup id
	ready   chan struct{}              // closed while the subscription is up
	wasUp   bool                       // it has been up before
	err     error                      // why it is down, when it went down
	stop    func()                     // ends the listener; nil until it starts
	closed  bool
	done    sync.WaitGroup
}

func (e *ends) init(log *slog.Logger) {
	e.log, e.waiters, e.ready = log, map[string][]*Subscription{}, make(chan struct{})
}

// start subscribes to the ends of lookups on rdb, unless it has.
func (e *ends) start(rdb redis.UniversalClient) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errClosed
	}
	if e.stop != nil {
		return nil
	}
	e.stop = pubsub.Go(&e.done, func(ctx context.Context) *redis.PubSub { return rdb.PSubscribe(ctx, endsPattern) }, pubsub.Handler{
		Subscribed: e.up,
		Message:    func(m *redis.Message) { e.wake(strings.TrimPrefix(m.Channel, doneChannel(""))) },
		Failed:     e.down,
	})
	return nil
}

// up records that the subscription is made. When it was made before,
// announcements may have been lost meanwhile: every waiter is woken.
func (e *ends) up() {
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-e.ready:
		return // up already
	default:
	}
	close(e.ready)
	e.err = nil
	if e.wasUp {
		e.log.Info("lookup ends: subscribed again; every waiter looks at its lookup")
		for _, subs := range e.waiters {
			for _, s := range subs {
				s.wake()
			}
		}
	}
	e.wasUp = true
}

// down records that the subscription failed with err.
func (e *ends) down(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.log.Warn("lookup ends: subscription failed; retrying", "err", err)
	}
	e.err = err
	select {
	case <-e.ready:
		e.ready = make(chan struct{})
	default:
	}
}

// add registers s and returns a channel closed while the subscription is
// up.
func (e *ends) add(s *Subscription) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.waiters[s.id] = append(e.waiters[s.id], s)
	return e.ready
}

// remove forgets s.
func (e *ends) remove(s *Subscription) {
	e.mu.Lock()
	defer e.mu.Unlock()
	subs := slices.DeleteFunc(e.waiters[s.id], func(o *Subscription) bool { return o == s })
	if len(subs) == 0 {
		delete(e.waiters, s.id)
	} else {
		e.waiters[s.id] = subs
	}
}

// wake wakes the waiters of lookup id.
func (e *ends) wake(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.waiters[id] {
		s.wake()
	}
}

// why says why the subscription is not up.
func (e *ends) why() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return e.err
	}
	return errors.New("not subscribed to the ends of lookups yet")
}

// close ends the subscription and waits for its listener.
func (e *ends) close() {
	e.mu.Lock()
	e.closed = true
	stop := e.stop
	e.mu.Unlock()
	if stop != nil {
		stop()
	}
	e.done.Wait()
}

// Subscription waits for the end of one lookup. Subscribe before the lookup
// is enqueued, so its end cannot be missed.
type Subscription struct {
	ends  *ends
	id    string
	ended chan struct{} // holds a wake-up not yet waited for
}

// Subscribe starts listening for the end of lookup id. It waits for the
// process's subscription to the ends of lookups, at most endsReadyWait.
func (c *Cache) Subscribe(ctx context.Context, id string) (*Subscription, error) {
	if err := c.ends.start(c.rdb); err != nil {
		return nil, fmt.Errorf("lookup subscribe: %w", err)
	}
	s := &Subscription{ends: &c.ends, id: id, ended: make(chan struct{}, 1)}
	ready := c.ends.add(s)
	t := time.NewTimer(endsReadyWait)
	defer t.Stop()
	var err error
	select {
	case <-ready:
		return s, nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-t.C:
		err = c.ends.why()
	}
	s.Close()
	return nil, fmt.Errorf("lookup subscribe: %w", err)
}

// wake makes s's Wait return, or its next one.
func (s *Subscription) wake() {
	select {
	case s.ended <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// Wait returns when the lookup ends, when every has passed (so the caller
// can look at the row in case a message was lost), or when ctx ends.
func (s *Subscription) Wait(ctx context.Context, every time.Duration) error {
	t := time.NewTimer(every)
	defer t.Stop()
	select {
	case <-s.ended:
		return nil
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close ends the subscription.
func (s *Subscription) Close() { s.ends.remove(s) }

// Close ends the process's subscription to the ends of lookups. Subscribe
// fails after it.
func (c *Cache) Close() { c.ends.close() }
