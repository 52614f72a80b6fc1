// Package lookup finds a domain's registration data: RDAP first, the WHOIS
// fallback when RDAP has no server for the TLD or fails, in one place
// (Resolver). It also holds what lookups share through Redis: the one-hour
// answer cache, the "lookup finished" notification the API waits on, and the
// claim that keeps background warm-ups from piling up.
package lookup

import (
	"context"
	"errors"
	"fmt"

	"github.com/domaind/domaind/internal/domaininfo"
)

// Source is one protocol's client (package rdap or whois).
type Source interface {
	Lookup(ctx context.Context, domain string) (domaininfo.Record, error)
}

// Resolver asks RDAP, then the fallback.
type Resolver struct {
	RDAP     Source
	Fallback Source
}

// Resolve returns the registration record of domain (a registrable,
// lower-case ASCII name). An RDAP "no such object" is final: the registry
// itself answered. Any other RDAP failure, including a TLD without an RDAP
// server, goes to the fallback. The error wraps domaininfo.ErrNotFound when
// the answering source has no data.
func (r *Resolver) Resolve(ctx context.Context, domain string) (domaininfo.Record, error) {
	rec, err := r.RDAP.Lookup(ctx, domain)
	if err == nil || errors.Is(err, domaininfo.ErrNotFound) {
		return rec, err
	}
	if ctx.Err() != nil {
		return rec, ctx.Err()
	}
	rec, ferr := r.Fallback.Lookup(ctx, domain)
	if ferr == nil || errors.Is(ferr, domaininfo.ErrNotFound) {
		return rec, ferr
	}
	return rec, fmt.Errorf("lookup %s: %w; %w", domain, err, ferr)
}
