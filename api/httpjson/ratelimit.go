package httpjson

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ratelimit"
)

// RateHeaders sets the RateLimit headers (SPEC §8) of r, a unit of p, on h
// and returns the 429 error to answer, with Retry-After set, when r is a
// refusal.
func RateHeaders(h http.Header, p ratelimit.Policy, r ratelimit.Result) error {
	// Set by key rather than Header.Set, to keep the spec's spelling
	// (Header.Set would send "Ratelimit-Limit"; clients compare
	// without case either way).
	// One array holds the four values: these headers are on every answer
	// of the cheapest endpoints.
	v := [...]string{strconv.Itoa(r.Limit), strconv.Itoa(r.Remaining), strconv.Itoa(ceilSeconds(r.Reset)), p.Header()}
	h["RateLimit-Limit"] = v[0:1:1]
	h["RateLimit-Remaining"] = v[1:2:2]
	h["RateLimit-Reset"] = v[2:3:3]
	h["RateLimit-Policy"] = v[3:4:4]
	if r.Allowed {
		return nil
	}
	h.Set("Retry-After", strconv.Itoa(RetryAfter(r)))
	if p.Kind == ratelimit.DayQuota {
		return fault.New(fault.QuotaExceeded,
			"daily quota of %d exhausted; it resets at 00:00 UTC", p.Limit)
	}
	return fault.New(fault.RateLimited,
		"rate limit of %d requests per %s exceeded; retry after the Retry-After seconds", p.Limit, ratelimit.PerWindow(p.Window))
}

// RetryAfter is when a refused r may try again: whole seconds, rounded up,
// one at least (the Retry-After header, and what tools say in words).
func RetryAfter(r ratelimit.Result) int { return max(ceilSeconds(r.RetryAfter), 1) }

func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}
