// Package ratelimit enforces per-client limits on Redis: per-window rates
// with GCRA (go-redis/redis_rate), and calendar-day quotas that reset at
// midnight UTC. Both answer with what the RateLimit-* headers need.
package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-redis/redis_rate/v10"
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
	rdb  redis.UniversalClient
	gcra *redis_rate.Limiter
	now  func() time.Time
}

// New returns a limiter on rdb. now is the clock of calendar-day quotas
// (time.Now in production; tests drive it across midnight).
func New(rdb redis.UniversalClient, now func() time.Time) *Limiter {
	return &Limiter{rdb: rdb, gcra: redis_rate.NewLimiter(rdb), now: now}
}

// Allow spends one unit of p for client (an opaque key such as an IP group).
func (l *Limiter) Allow(ctx context.Context, p Policy, client string) (Result, error) {
	if p.Kind == DayQuota {
		return l.allowDay(ctx, p, client)
	}
	r, err := l.gcra.Allow(ctx, "rl:"+p.Name+":"+client, redis_rate.Limit{Rate: p.Limit, Burst: p.Limit, Period: p.Window})
	if err != nil {
		return Result{}, fmt.Errorf("rate limit %s: %w", p.Name, err)
	}
	res := Result{Allowed: r.Allowed > 0, Limit: p.Limit, Remaining: r.Remaining, Reset: r.ResetAfter}
	if !res.Allowed {
		res.RetryAfter = r.RetryAfter
	}
	return res, nil
}

// dayScript increments today's counter unless it is at the limit, and sets
// the counter to expire after the day ends (with an hour's grace for clock skew).
var dayScript = redis.NewScript(`
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used >= tonumber(ARGV[1]) then return {0, used} end
used = redis.call('INCR', KEYS[1])
if used == 1 then redis.call('EXPIREAT', KEYS[1], ARGV[2]) end
return {1, used}
`)

func (l *Limiter) allowDay(ctx context.Context, p Policy, client string) (Result, error) {
	now := l.now().UTC()
	end := now.Truncate(24 * time.Hour).Add(24 * time.Hour)
	v, err := dayScript.Run(ctx, l.rdb, []string{dayKey(p, client, now)}, p.Limit, end.Add(time.Hour).Unix()).Int64Slice()
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
	key := dayKey(p, client, l.now().UTC())
	return l.rdb.Eval(ctx, `if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then return redis.call('DECR', KEYS[1]) end return 0`, []string{key}).Err()
}

func dayKey(p Policy, client string, now time.Time) string {
	return "quota:" + p.Name + ":" + client + ":" + now.Format("2006-01-02")
}
