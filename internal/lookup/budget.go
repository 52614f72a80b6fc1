package lookup

import (
	"context"
	"errors"
	"fmt"

	"github.com/domaind/domaind/internal/ratelimit"
)

// DefaultServerBudget is how many queries all workers together send to one
// registry server (an RDAP host or a WHOIS server) in any minute.
var DefaultServerBudget = ratelimit.PerMinute("registry-server", 300)

// ErrServerBusy refuses a query to a server whose budget is spent.
var ErrServerBusy = errors.New("the registry server's query budget is spent; retry later")

// ServerBudget bounds the queries the whole service sends to each registry
// server, whatever asked for them (a person's lookup, a search's warm-up, a
// retry). Registries block the source addresses of clients that ask too
// much, which would take lookups down for every user at once; a budget
// spent is a failed lookup, which the caller may retry later.
type ServerBudget struct {
	Limiter *ratelimit.Limiter
	Policy  ratelimit.Policy
}

// Take spends one query to server, or returns ErrServerBusy.
func (b *ServerBudget) Take(ctx context.Context, server string) error {
	r, err := b.Limiter.Allow(ctx, b.Policy, server)
	if err != nil {
		return fmt.Errorf("query budget of %s: %w", server, err)
	}
	if !r.Allowed {
		return ErrServerBusy
	}
	return nil
}
