package lookup

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/domaind/domaind/internal/ratelimit"
)

// DefaultServerBudget is how many queries all workers together send to one
// registry server (an RDAP host or a WHOIS server) in any minute.
var DefaultServerBudget = ratelimit.PerMinute("registry-server", 300)

// FallbackShare is the part of a server's budget one worker process spends
// on its own while Redis cannot count for all of them: a quarter, so that
// up to four workers together stay within the budget.
const FallbackShare = 4

// ErrServerBusy refuses a query to a server whose budget is spent.
var ErrServerBusy = errors.New("the registry server's query budget is spent; retry later")

// ServerBudget bounds the queries the whole service sends to each registry
// server, whatever asked for them (a person's lookup, a search's warm-up, a
// retry). Registries block the source addresses of clients that ask too
// much, which would take lookups down for every user at once; a budget
// spent is a failed lookup, which the caller may retry later.
//
// The budget lives in Redis. While Redis cannot answer (a failover, an
// outage), each process spends its own share of it (FallbackShare) rather
// than failing every lookup, and says so: a warning in the log once a
// minute, and Degraded for each query so allowed or refused.
type ServerBudget struct {
	Limiter *ratelimit.Limiter
	Policy  ratelimit.Policy
	Log     *slog.Logger
	// Degraded, when set, is told of each query the process's own share
	// decided (a metric).
	Degraded func()
	// Now is the clock of the process's share (time.Now when nil).
	Now func() time.Time

	mu     sync.Mutex
	local  map[string]*rate.Limiter
	warned time.Time
}

// Take spends one query to server, or returns ErrServerBusy.
func (b *ServerBudget) Take(ctx context.Context, server string) error {
	r, err := b.Limiter.Allow(ctx, b.Policy, server)
	if err != nil {
		return b.takeLocal(ctx, server, err)
	}
	if !r.Allowed {
		return ErrServerBusy
	}
	return nil
}

// takeLocal spends one query of the process's own share of server's
// budget: Redis failed with cause.
func (b *ServerBudget) takeLocal(ctx context.Context, server string, cause error) error {
	now := time.Now()
	if b.Now != nil {
		now = b.Now()
	}
	b.mu.Lock()
	if b.local == nil {
		b.local = map[string]*rate.Limiter{}
	}
	share := max(b.Policy.Limit/FallbackShare, 1)
	l := b.local[server]
	if l == nil {
		l = rate.NewLimiter(rate.Limit(float64(share)/b.Policy.Window.Seconds()), share)
		b.local[server] = l
	}
	warn := now.Sub(b.warned) >= time.Minute
	if warn {
		b.warned = now
	}
	allowed := l.AllowN(now, 1)
	b.mu.Unlock()
	if warn && b.Log != nil {
		b.Log.WarnContext(ctx, "registry query budget: Redis cannot count it; this process spends its own share",
			"share", share, "window", b.Policy.Window.String(), "err", cause)
	}
	if b.Degraded != nil {
		b.Degraded()
	}
	if !allowed {
		return ErrServerBusy
	}
	return nil
}
