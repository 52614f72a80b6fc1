// Package hostlimit bounds the requests one process has in flight to each
// host at once, so that a burst of lookups queues here rather than
// hammering one registry's RDAP or WHOIS server. (The per-server budget
// over time, shared by every worker, is internal/ratelimit's.)
package hostlimit

import (
	"context"
	"fmt"
	"sync"
)

// Limiter gives out Per slots per host.
type Limiter struct {
	per   int
	mu    sync.Mutex
	slots map[string]chan struct{} // host → its requests in flight
}

// New returns a Limiter of per slots per host (1 at least).
func New(per int) *Limiter {
	return &Limiter{per: max(per, 1), slots: map[string]chan struct{}{}}
}

// Acquire takes one of host's slots, waiting for one while ctx lasts, and
// returns the func that gives it back.
func (l *Limiter) Acquire(ctx context.Context, host string) (release func(), err error) {
	l.mu.Lock()
	slots, ok := l.slots[host]
	if !ok {
		slots = make(chan struct{}, l.per)
		l.slots[host] = slots
	}
	l.mu.Unlock()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for %s: %w", host, ctx.Err())
	}
}
