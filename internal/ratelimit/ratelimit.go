// Package ratelimit enforces per-client limits on Redis: per-window rates
// as sliding-window logs (a Lua script), and calendar-day quotas that reset
// at midnight UTC. Both answer with what the RateLimit-* headers need. The
// checks of concurrent requests share Redis round trips (see batcher), and
// a client that bursts on a policy with a Lease takes its units a few at a
// time (see lease), logged as one entry per trip (see trips).
package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Kind tells a rolling rate from a calendar-day quota.
type Kind int

// The kinds of Policy.
const (
	Rate     Kind = iota // at most N in any Window (a sliding window)
	DayQuota             // N per UTC calendar day
)

// Policy is one named limit, e.g. {"search", Rate, 60, time.Minute}.
type Policy struct {
	Name   string
	Kind   Kind
	Limit  int
	Window time.Duration // Rate only; DayQuota windows are UTC days
	// Lease (Rate only), when above 1, is the most units a process may
	// take from Redis at once for a client that bursts, to spend locally
	// for leaseFor (see lease). For read endpoints with high limits, where
	// the round trip per request is most of the cost.
	Lease int
}

// PerMinute is a Rate policy of n per minute.
func PerMinute(name string, n int) Policy {
	return Policy{Name: name, Kind: Rate, Limit: n, Window: time.Minute}
}

// PerHour is a Rate policy of n per hour.
func PerHour(name string, n int) Policy {
	return Policy{Name: name, Kind: Rate, Limit: n, Window: time.Hour}
}

// PerDay is a DayQuota policy of n per UTC day.
func PerDay(name string, n int) Policy { return Policy{Name: name, Kind: DayQuota, Limit: n} }

// Header is the RateLimit-Policy value, e.g. "60;w=60" or "10;w=86400".
func (p Policy) Header() string {
	w := p.Window
	if p.Kind == DayQuota {
		w = 24 * time.Hour
	}
	return strconv.Itoa(p.Limit) + ";w=" + strconv.Itoa(int(w/time.Second))
}

// PerWindow says a window after "per": "minute", "15 minutes".
func PerWindow(d time.Duration) string {
	n, unit := inUnits(d)
	if n == 1 {
		return unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// DescribeDuration says d in words: "15 seconds", "1 minute", "24 hours",
// "30 days".
func DescribeDuration(d time.Duration) string {
	n, unit := inUnits(d)
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// inUnits is d as a whole number of the largest unit that divides it
// (days from two on; 24 hours stay hours, as people say them).
func inUnits(d time.Duration) (int64, string) {
	day := 24 * time.Hour
	if d >= 2*day && d%day == 0 {
		return int64(d / day), "day"
	}
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}} {
		if d >= u.d && d%u.d == 0 {
			return int64(d / u.d), u.name
		}
	}
	return d.Milliseconds(), "millisecond"
}

// Result is the outcome of one Allow.
type Result struct {
	Allowed    bool
	Limit      int
	Used       int           // DayQuota: units spent today, this one included when allowed
	Remaining  int           // units left in the window after this request
	Reset      time.Duration // until the window is full again (Rate) or the day ends (DayQuota)
	RetryAfter time.Duration // when refused: until a request would be allowed

	unit string // the Rate log entry (or trip) this Allow spent from, for Refund
}

// Limiter checks policies against Redis.
type Limiter struct {
	batch  *batcher
	leases *leases
	now    func() time.Time
	// prefix and seq make each Rate log entry unique across processes.
	prefix string
	seq    atomic.Uint64
}

// New returns a limiter on rdb with the clock now (time.Now in production;
// tests drive it, across midnight for quotas, minute by minute for rates).
// Replicas keep NTP time: a skew of milliseconds between them moves a
// window by as much, which no client can notice.
func New(rdb redis.UniversalClient, now func() time.Time) *Limiter {
	b := make([]byte, 6)
	rand.Read(b)
	l := &Limiter{batch: &batcher{rdb: rdb}, now: now, prefix: hex.EncodeToString(b)}
	l.leases = &leases{byKey: map[string]*lease{}, giveBack: l.giveBack}
	return l
}

// Allow spends one unit of p for client (an opaque key such as an IP group).
func (l *Limiter) Allow(ctx context.Context, p Policy, client string) (Result, error) {
	if p.Kind == DayQuota {
		return l.allowDay(ctx, p, client)
	}
	return l.allowRate(ctx, p, client)
}

// slidingScript spends a unit of a sliding-window limit and returns
// {allowed, remaining, retry_after_us, reset_after_us}. The key is a sorted
// set of the units spent, scored by their time in Unix microseconds; ARGV
// are now, the window (microseconds), the limit and the unit's unique
// name. A unit is granted while fewer than limit are in the window that
// ends now, so no window of that length ever holds more than limit units
// spent, wherever it starts. A refused unit is not recorded. (A leased
// policy's log counts trips instead: tripSpendScript.)
var slidingScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
if n >= limit then
  local freeing = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
  local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  return {0, 0, tonumber(freeing[2]) + window - now, tonumber(newest[2]) + window - now}
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
return {1, limit - n - 1, 0, window}
`)

func (l *Limiter) allowRate(ctx context.Context, p Policy, client string) (Result, error) {
	key := rateKey(p, client)
	if p.Lease <= 1 {
		now, name := l.now(), l.newName()
		v, err := l.batch.run(ctx, slidingScript, []string{key}, now.UnixMicro(), p.Window.Microseconds(), p.Limit, name)
		if err != nil {
			return Result{}, limitErr(p, err)
		}
		res := rateResult(p, v)
		if res.Allowed {
			res.unit = name
		}
		return res, nil
	}
	for {
		now := l.now()
		res, ok, wait := l.leases.take(key, now, p)
		if ok {
			return res, nil
		}
		if wait != nil {
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return Result{}, ctx.Err()
			}
		}
		want, stale := l.leases.plan(key, now, p)
		until := now
		if want > 1 {
			until = now.Add(leaseFor)
		}
		name := l.newName()
		v, err := l.spendTrip(ctx, p, key, name, now, until, want, stale)
		var ahead trip
		if err == nil {
			res = rateResult(p, v)
			if res.Allowed {
				res.unit, ahead = name, trip{name, int(v[4]) - 1}
			}
		}
		l.leases.got(key, want, ahead, now.Add(leaseFor), res.Remaining)
		if err != nil || res.Allowed {
			res.Remaining += ahead.left
			return res, err
		}
		// Refused: units that concurrent requests took meanwhile may be left.
		if res, ok, _ := l.leases.take(key, l.now(), p); ok {
			return res, nil
		}
		return res, nil
	}
}

// newName is a log entry's name, unique across processes.
func (l *Limiter) newName() string {
	return l.prefix + "-" + strconv.FormatUint(l.seq.Add(1), 36)
}

// rateResult reads the {allowed, remaining, retry_after_us,
// reset_after_us} a sliding-window script returns.
func rateResult(p Policy, v []int64) Result {
	return Result{
		Allowed: v[0] == 1, Limit: p.Limit, Remaining: int(v[1]),
		RetryAfter: time.Duration(v[2]) * time.Microsecond, Reset: time.Duration(v[3]) * time.Microsecond,
	}
}

// Status reports what Allow would find for client now, spending nothing:
// for answers that report a limit without using it (a replayed response
// shows the current RateLimit headers, not the ones it was first sent with).
func (l *Limiter) Status(ctx context.Context, p Policy, client string) (Result, error) {
	rs, err := l.StatusAll(ctx, Check{p, client})
	if err != nil {
		return Result{}, err
	}
	return rs[0], nil
}

// Check is a policy and the client it counts for.
type Check struct {
	Policy Policy
	Client string
}

// StatusAll is Status of each check, all read in one round trip to Redis:
// for a request held to several limits at once.
func (l *Limiter) StatusAll(ctx context.Context, checks ...Check) ([]Result, error) {
	if len(checks) == 0 {
		return nil, nil
	}
	now := l.now()
	calls := make([]*scriptCall, len(checks))
	for i, c := range checks {
		calls[i] = statusCall(c, now)
	}
	if err := l.batch.runAll(ctx, calls...); err != nil {
		return nil, limitErr(checks[0].Policy, err)
	}
	out := make([]Result, len(checks))
	for i, c := range checks {
		if err := calls[i].err; err != nil {
			return nil, limitErr(c.Policy, err)
		}
		out[i] = statusResult(c.Policy, calls[i].res, now)
	}
	return out, nil
}

// limitErr is err, met checking p, saying which limit it is.
func limitErr(p Policy, err error) error {
	if p.Kind == DayQuota {
		return fmt.Errorf("quota %s: %w", p.Name, err)
	}
	return fmt.Errorf("rate limit %s: %w", p.Name, err)
}

// statusCall is the script run that reads c's state at now.
func statusCall(c Check, now time.Time) *scriptCall {
	p := c.Policy
	if p.Kind == DayQuota {
		return newCall(dayStatusScript, []string{dayKey(p, c.Client, now.UTC())})
	}
	script, keys := statusScript, []string{rateKey(p, c.Client)}
	if p.Lease > 1 {
		script, keys = tripStatusScript, tripKeys(keys[0])
	}
	return newCall(script, keys, now.UnixMicro(), p.Window.Microseconds(), p.Limit)
}

// statusResult is the Result of p that a statusCall at now answered v.
func statusResult(p Policy, v []int64, now time.Time) Result {
	if p.Kind != DayQuota {
		return rateResult(p, v)
	}
	end := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	used := int(v[0])
	res := Result{Allowed: used < p.Limit, Limit: p.Limit, Used: used, Remaining: max(p.Limit-used, 0), Reset: end.Sub(now)}
	if !res.Allowed {
		res.RetryAfter = res.Reset
	}
	return res
}

// statusScript reads a sliding-window log as slidingScript would, writing
// nothing, and returns {allowed, remaining, retry_after_us, reset_after_us}.
// Scores are whole microseconds, so "after now - window" is "from now -
// window + 1".
var statusScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local from = now - window + 1
local n = redis.call('ZCOUNT', KEYS[1], from, '+inf')
if n == 0 then return {1, limit, 0, 0} end
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local reset = tonumber(newest[2]) + window - now
if n >= limit then
  local freeing = redis.call('ZRANGEBYSCORE', KEYS[1], from, '+inf', 'WITHSCORES', 'LIMIT', n - limit, 1)
  return {0, 0, tonumber(freeing[2]) + window - now, reset}
end
return {1, limit - n, 0, reset}
`)

// dayStatusScript returns {used} of a day counter.
var dayStatusScript = redis.NewScript(`return {tonumber(redis.call('GET', KEYS[1]) or '0')}`)

// rateKey is the key of client's log under p; a leased log's name is
// braced, for tripKeys.
func rateKey(p Policy, client string) string {
	if p.Lease > 1 {
		return "rate:{" + p.Name + ":" + client + "}"
	}
	return "rate:" + p.Name + ":" + client
}

// dayScript increments today's counter unless it is at the limit, and sets
// the counter to expire ARGV[2] seconds later: after the day ends, with an
// hour's grace. The expiry is relative, so Redis's clock need not agree with
// ours (nor with the clock tests drive across midnight).
var dayScript = redis.NewScript(`
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used >= tonumber(ARGV[1]) then return {0, used} end
used = redis.call('INCR', KEYS[1])
if used == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return {1, used}
`)

func (l *Limiter) allowDay(ctx context.Context, p Policy, client string) (Result, error) {
	now := l.now().UTC()
	end := now.Truncate(24 * time.Hour).Add(24 * time.Hour)
	v, err := l.batch.run(ctx, dayScript, []string{dayKey(p, client, now)}, p.Limit, int64((end.Sub(now)+time.Hour)/time.Second))
	if err != nil {
		return Result{}, limitErr(p, err)
	}
	used := int(v[1])
	res := Result{Allowed: v[0] == 1, Limit: p.Limit, Used: used, Remaining: max(p.Limit-used, 0), Reset: end.Sub(now)}
	if !res.Allowed {
		res.RetryAfter = res.Reset
	}
	return res, nil
}

// Refund gives back the unit r spent, for a request that turned out not
// to count (refused as invalid, failed on our side, or an outcome a limit
// does not count, such as a right password). A refused r spent nothing.
func (l *Limiter) Refund(ctx context.Context, p Policy, client string, r Result) error {
	if !r.Allowed {
		return nil
	}
	if p.Kind == Rate {
		key := rateKey(p, client)
		if p.Lease > 1 {
			return l.unspendTrips(ctx, key, []trip{{r.unit, 1}})
		}
		_, err := l.batch.run(ctx, unspendScript, []string{key}, r.unit)
		return err
	}
	_, err := l.batch.run(ctx, refundScript, []string{dayKey(p, client, l.now().UTC())})
	return err
}

// unspendScript removes units from a sliding-window log and returns {removed}.
var unspendScript = redis.NewScript(`return {redis.call('ZREM', KEYS[1], unpack(ARGV))}`)

// giveBack gives the unspent units of leases that ended unused back to
// their logs, in the background: nobody waits for it, and a unit not given
// back only counts until it leaves the window. It lasts batchTimeout at
// most, so a Limiter still needs no Close.
func (l *Limiter) giveBack(byKey map[string][]trip) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
		defer cancel()
		var wg sync.WaitGroup
		for key, trips := range byKey {
			wg.Go(func() { l.unspendTrips(ctx, key, trips) })
		}
		wg.Wait()
	}()
}

// refundScript decrements a day counter that is above zero and returns {used}.
var refundScript = redis.NewScript(`
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used > 0 then used = redis.call('DECR', KEYS[1]) end
return {used}
`)

func dayKey(p Policy, client string, now time.Time) string {
	return "quota:" + p.Name + ":" + client + ":" + now.Format("2006-01-02")
}
