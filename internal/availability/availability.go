// Package availability answers "can this name be registered?" for the
// search: the registry provider's check, behind a short Redis cache, mapped
// onto the search's states. A check that fails is "unknown", never
// "available".
package availability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/registry"
)

// States a check can end in. The search adds for_sale, unsupported and
// invalid from what it knows before asking the registry.
const (
	Available  = "available"
	Registered = "registered"
	Premium    = "premium"
	Reserved   = "reserved"
	// Unsupported means the registry does not sell the name's TLD.
	Unsupported = "unsupported"
	// Unknown means the check failed or timed out.
	Unknown = "unknown"
)

// Cache lifetimes. An available name may be taken any minute; a taken one
// rarely comes free.
const (
	availableTTL = 2 * time.Minute
	takenTTL     = time.Hour
)

// ErrTimeout is wrapped by a Result's Err when the registry did not answer
// within the Checker's timeout (rather than failing, or the caller giving up).
var ErrTimeout = errors.New("availability: the registry did not answer in time")

// Result is the answer for one name.
type Result struct {
	State   string `json:"state"`
	Premium bool   `json:"premium,omitempty"`
	// Cents is the registry's create price when it gave one (premium names).
	Cents int64 `json:"cents,omitempty"`
	// Currency is the currency of Cents as the registry named it; a
	// registry account may quote in another currency than our USD price list.
	Currency string `json:"currency,omitempty"`
	// Cached is true when the answer came from the cache.
	Cached bool `json:"-"`
	// Err is why the state is Unknown. It wraps ErrTimeout when the check
	// ran out of time, and the provider's error otherwise.
	Err error `json:"-"`
}

// Checker checks names against a registry provider.
type Checker struct {
	registry registry.Provider
	rdb      redis.UniversalClient
	// timeout bounds one registry check.
	timeout time.Duration
}

// New returns a Checker; timeout bounds each registry call.
func New(p registry.Provider, rdb redis.UniversalClient, timeout time.Duration) *Checker {
	return &Checker{registry: p, rdb: rdb, timeout: timeout}
}

// Provider is the name of the registry provider that answers.
func (c *Checker) Provider() string { return c.registry.Name() }

func cacheKey(name string) string { return "avail:" + name }

// Check returns the state of name (lower-case ASCII label.tld). It never
// fails: a registry error or timeout is the Unknown state with Err set. A
// cache that cannot be read is skipped.
func (c *Checker) Check(ctx context.Context, name string) Result {
	if b, err := c.rdb.Get(ctx, cacheKey(name)).Bytes(); err == nil {
		var r Result
		if json.Unmarshal(b, &r) == nil && r.State != "" {
			r.Cached = true
			return r
		}
	}
	cctx, cancel := context.WithTimeoutCause(ctx, c.timeout, ErrTimeout)
	defer cancel()
	a, err := c.registry.Check(cctx, name)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(cctx), ErrTimeout) {
		// Providers wrap a deadline in their own ways (or not at all); the
		// cause of our own context is what tells a timeout apart.
		err = fmt.Errorf("check %s: %w: %w", name, ErrTimeout, err)
	}
	r := result(a, err)
	if r.State == Unknown {
		return r
	}
	ttl := takenTTL
	if r.State == Available || r.State == Premium {
		ttl = availableTTL
	}
	if b, err := json.Marshal(r); err == nil {
		c.rdb.Set(context.WithoutCancel(ctx), cacheKey(name), b, ttl) // best effort; the answer stands without it
	}
	return r
}

// result maps a registry answer onto a state.
func result(a registry.Availability, err error) Result {
	switch {
	case errors.Is(err, registry.ErrUnknownTLD):
		return Result{State: Unsupported}
	case err != nil:
		return Result{State: Unknown, Err: err}
	case a.Available && a.Premium:
		return Result{State: Premium, Premium: true, Cents: a.Cents, Currency: a.Currency}
	case a.Available:
		return Result{State: Available, Cents: a.Cents, Currency: a.Currency}
	case strings.Contains(a.Reason, registry.ReasonReserved):
		return Result{State: Reserved}
	case a.Reason == registry.ReasonNotSold:
		return Result{State: Unsupported}
	default:
		return Result{State: Registered}
	}
}
