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
	h["RateLimit-Limit"] = []string{strconv.Itoa(r.Limit)}
	h["RateLimit-Remaining"] = []string{strconv.Itoa(r.Remaining)}
	h["RateLimit-Reset"] = []string{strconv.Itoa(ceilSeconds(r.Reset))}
	h["RateLimit-Policy"] = []string{p.Header()}
	if r.Allowed {
		return nil
	}
	h.Set("Retry-After", strconv.Itoa(max(ceilSeconds(r.RetryAfter), 1)))
	if p.Kind == ratelimit.DayQuota {
		return fault.New(fault.QuotaExceeded,
			"daily quota of %d exhausted; it resets at 00:00 UTC", p.Limit)
	}
	return fault.New(fault.RateLimited,
		"rate limit of %d requests per %s exceeded; retry after the Retry-After seconds", p.Limit, ratelimit.PerWindow(p.Window))
}

func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}
