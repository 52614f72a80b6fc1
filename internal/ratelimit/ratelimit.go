// Package ratelimit enforces per-client limits on Redis: per-window rates
// with GCRA (the generic cell rate algorithm, as a Lua script), and
// calendar-day quotas that reset at midnight UTC. Both answer with what the
// RateLimit-* headers need. The checks of concurrent requests share Redis
// round trips (see batcher).
package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Kind tells a rolling rate from a calendar-day quota.
type Kind int

// The kinds of Policy.
const (
	Rate     Kind = iota // N per Window, smoothed with GCRA
	DayQuota             // N per UTC calendar day
)

// Policy is one named limit, e.g. {"search", Rate, 60, time.Minute}.
type Policy struct {
	Name   string
	Kind   Kind
	Limit  int
	Window time.Duration // Rate only; DayQuota windows are UTC days
}

// PerMinute is a Rate policy of n per minute.
func PerMinute(name string, n int) Policy {
	return Policy{Name: name, Kind: Rate, Limit: n, Window: time.Minute}
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

// Result is the outcome of one Allow.
type Result struct {
	Allowed    bool
	Limit      int
	Used       int           // DayQuota: units spent today, this one included when allowed
	Remaining  int           // units left in the window after this request
	Reset      time.Duration // until the window is full again (Rate) or the day ends (DayQuota)
	RetryAfter time.Duration // when refused: until a request would be allowed
}

// Limiter checks policies against Redis.
type Limiter struct {
	batch *batcher
	now   func() time.Time
}

// New returns a limiter on rdb with the clock now (time.Now in production;
// tests drive it, across midnight for quotas, minute by minute for rates).
// Replicas keep NTP time: a skew of milliseconds between them moves a
// window by as much, which no client can notice.
func New(rdb redis.UniversalClient, now func() time.Time) *Limiter {
	return &Limiter{batch: &batcher{rdb: rdb}, now: now}
}

// Allow spends one unit of p for client (an opaque key such as an IP group).
func (l *Limiter) Allow(ctx context.Context, p Policy, client string) (Result, error) {
	if p.Kind == DayQuota {
		return l.allowDay(ctx, p, client)
	}
	return l.allowRate(ctx, p, client)
}

// gcraScript spends one cell of a GCRA limit and returns {allowed,
// remaining, retry_after_us, reset_after_us}. The key holds the theoretical
// arrival time (TAT) in Unix microseconds; ARGV are the emission interval
// (window/limit) and the burst tolerance (the window), in microseconds
// (the interval may be fractional), "1" to only look (spend nothing), and
// now in Unix microseconds. A request is allowed when the TAT it would
// leave is at most one window ahead of now.
var gcraScript = redis.NewScript(`
local now = tonumber(ARGV[4])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local new_tat = tat + interval
local slack = now - (new_tat - burst)
if slack < 0 then return {0, 0, -slack, tat - now} end
if ARGV[3] == '1' then return {1, math.floor(slack / interval), 0, tat - now} end
redis.call('SET', KEYS[1], string.format('%.3f', new_tat), 'PX', math.max(1, math.ceil((new_tat - now) / 1000)))
return {1, math.floor(slack / interval), 0, new_tat - now}
`)

// Peek reports whether a unit of the Rate policy p would be allowed for
// client now, without spending it: for limits that count only some
// outcomes (failed sign-ins), checked before the work and spent after it.
func (l *Limiter) Peek(ctx context.Context, p Policy, client string) (Result, error) {
	return l.rate(ctx, p, client, true)
}

func (l *Limiter) allowRate(ctx context.Context, p Policy, client string) (Result, error) {
	return l.rate(ctx, p, client, false)
}

func (l *Limiter) rate(ctx context.Context, p Policy, client string, peek bool) (Result, error) {
	look := "0"
	if peek {
		look = "1"
	}
	interval := float64(p.Window.Microseconds()) / float64(p.Limit)
	v, err := l.batch.run(ctx, gcraScript, []string{"gcra:" + p.Name + ":" + client}, interval, p.Window.Microseconds(), look, l.now().UnixMicro())
	if err != nil {
		return Result{}, fmt.Errorf("rate limit %s: %w", p.Name, err)
	}
	return Result{
		Allowed: v[0] == 1, Limit: p.Limit, Remaining: int(v[1]),
		RetryAfter: time.Duration(v[2]) * time.Microsecond, Reset: time.Duration(v[3]) * time.Microsecond,
	}, nil
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
		return Result{}, fmt.Errorf("quota %s: %w", p.Name, err)
	}
	used := int(v[1])
	res := Result{Allowed: v[0] == 1, Limit: p.Limit, Used: used, Remaining: max(p.Limit-used, 0), Reset: end.Sub(now)}
	if !res.Allowed {
		res.RetryAfter = res.Reset
	}
	return res, nil
}

// Refund gives back one unit of a DayQuota spent today, for a request that
// turned out not to count (refused as invalid, or failed on our side).
func (l *Limiter) Refund(ctx context.Context, p Policy, client string) error {
	if p.Kind != DayQuota {
		return nil
	}
	_, err := l.batch.run(ctx, refundScript, []string{dayKey(p, client, l.now().UTC())})
	return err
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
