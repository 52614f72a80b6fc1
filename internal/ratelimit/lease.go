package ratelimit

import (
	"sync"
	"time"
)

// leaseFor is how long a process may spend the units it took ahead for a
// client. They are logged at the lease's end, not when taken: a unit is
// never spent later than its time in the log, so every window the spending
// falls in counts it, and the limit holds across processes as if each unit
// had gone to Redis on its own. The cost is that a unit spent counts up to
// leaseFor longer than its window.
const leaseFor = 250 * time.Millisecond

// A lease is the units a process took ahead for one client and policy, and
// how the client has been bursting. A client with no request in the last
// leaseFor takes one unit per request, as without leases; one that comes
// back within it takes four times as many as the last time (8 at least,
// as a client that comes back so soon is seldom done), up to the policy's
// Lease (and half of what it has left: near its limit, one at a time).
// Requests that find the lease empty while units are being taken wait for
// them, as many as are coming, rather than each going to Redis; a request
// that asks while another does is part of a burst, and asks for the
// policy's Lease at once. Units a lease still holds when it ends are given
// back: with the client's next request, or, when it does not come within
// leaseFor, in the background.
type lease struct {
	units     []trip        // taken, not yet spent
	held      int           // how many units they are
	until     time.Time     // when the units may no longer be spent
	remaining int           // units the log had left when they were taken
	last      time.Time     // when units were last taken from Redis
	size      int           // how many were asked for then
	taking    int           // requests asking Redis for units now
	coming    int           // units they ask for ahead
	waiting   int           // requests waiting for those units
	taken     chan struct{} // closed when one of them has its answer
}

// leases are a Limiter's, by log key.
type leases struct {
	mu      sync.Mutex
	byKey   map[string]*lease
	sweepAt time.Time
	// giveBack removes the units of ended leases from their logs.
	giveBack func(byKey map[string][]trip)
}

// take spends a unit of key's lease for the request, if one is left. When
// none is but units are being taken, it returns a channel closed when they
// have come.
func (ls *leases) take(key string, now time.Time, p Policy) (res Result, ok bool, wait <-chan struct{}) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.sweep(now, key)
	l := ls.byKey[key]
	switch {
	case l == nil:
		return Result{}, false, nil
	case l.held == 0 || !now.Before(l.until):
		if l.waiting < l.coming {
			l.waiting++
			return Result{}, false, l.taken
		}
		return Result{}, false, nil
	}
	t := &l.units[len(l.units)-1]
	u := t.name
	if t.left--; t.left == 0 {
		l.units = l.units[:len(l.units)-1]
	}
	l.held--
	return Result{
		Allowed: true, Limit: p.Limit, Remaining: l.remaining + l.held,
		Reset: l.until.Sub(now) + p.Window, unit: u,
	}, true, nil
}

// plan says how many units a request that found no lease left asks Redis
// for, and which units of an ended lease to give back with it. The caller
// reports the answer with got.
func (ls *leases) plan(key string, now time.Time, p Policy) (want int, stale []trip) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.byKey[key]
	if l == nil {
		l = &lease{}
		ls.byKey[key] = l
	}
	want = 1
	switch {
	case l.taking > 0: // concurrent requests: a burst under way
		want = p.Lease
	case !l.last.IsZero() && now.Sub(l.last) < leaseFor:
		want = min(max(4*l.size, 8), p.Lease)
	}
	if !now.Before(l.until) {
		stale, l.units, l.held = l.units, nil, 0
	}
	l.last, l.size = now, want
	if l.taking == 0 {
		l.taken = make(chan struct{})
	}
	l.taking++
	l.coming += want - 1
	return want, stale
}

// got adds the units a planned request took ahead (none when it was
// refused or failed) to key's lease and wakes the requests waiting for
// them. Units of two answers that overlap may be spent until the earlier
// end.
func (ls *leases) got(key string, want int, ahead trip, until time.Time, remaining int) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.byKey[key]
	if l == nil { // swept meanwhile
		l = &lease{last: until.Add(-leaseFor)}
		ls.byKey[key] = l
	} else {
		l.taking--
		l.coming -= want - 1
		l.waiting = 0 // all woken, to take a unit or come back
		close(l.taken)
		l.taken = make(chan struct{})
	}
	if ahead.left == 0 {
		return
	}
	if l.held == 0 || until.Before(l.until) {
		l.until = until
	}
	l.units = append(l.units, ahead)
	l.held += ahead.left
	l.remaining = remaining
}

// sweep forgets, every leaseFor, the clients that took nothing for that
// long, and gives their unspent units back; not the client of the request
// at hand (key), whose request gives them back itself.
func (ls *leases) sweep(now time.Time, key string) {
	if now.Before(ls.sweepAt) {
		return
	}
	ls.sweepAt = now.Add(leaseFor)
	var back map[string][]trip
	for k, l := range ls.byKey {
		if k == key || now.Sub(l.last) < leaseFor || now.Before(l.until) || l.taking > 0 {
			continue
		}
		if l.held > 0 {
			if back == nil {
				back = map[string][]trip{}
			}
			back[k] = l.units
		}
		delete(ls.byKey, k)
	}
	if back != nil {
		ls.giveBack(back)
	}
}
