package partnerclient

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// RetryPolicy says how often and how long a Client waits before trying a
// request again. Network errors, 429 and 5xx answers are retried; other
// answers are returned at once.
type RetryPolicy struct {
	// MaxAttempts counts every attempt, the first included; 1 (or less)
	// turns retries off.
	MaxAttempts int
	// BaseDelay is the wait before the first retry; it doubles for each
	// further retry, and each wait is drawn at random from its upper half
	// (jitter), so many clients failing together do not retry together.
	BaseDelay time.Duration
	// MaxDelay caps one wait. A Retry-After longer than this is not waited
	// for: the 429 or 503 is returned instead.
	MaxDelay time.Duration
}

// DefaultRetryPolicy makes at most 4 attempts over a few seconds.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 4, BaseDelay: 500 * time.Millisecond, MaxDelay: 30 * time.Second}

// next says whether to retry after attempt (counted from 1) ended with resp
// (nil after a network error) at now, and how long to wait first.
func (p RetryPolicy) next(attempt int, resp *http.Response, now time.Time) (time.Duration, bool) {
	if attempt >= p.MaxAttempts {
		return 0, false
	}
	if resp != nil && resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
		return 0, false
	}
	if resp != nil {
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), now); ok {
			return d, d <= p.MaxDelay
		}
	}
	return p.backoff(attempt), true
}

// backoff is the jittered wait after attempt: a random duration in the upper
// half of BaseDelay·2^(attempt-1), capped at MaxDelay.
func (p RetryPolicy) backoff(attempt int) time.Duration {
	d := p.MaxDelay
	if shift := attempt - 1; shift < 32 && p.BaseDelay<<shift < p.MaxDelay {
		d = p.BaseDelay << shift
	}
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP-date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
