package main

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/metrics"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/rdap"
	"github.com/domaind/domaind/internal/whois"
)

// lookupTimeout bounds one RDAP request.
const lookupTimeout = 10 * time.Second

// lookups is the worker's WHOIS/RDAP machinery.
type lookups struct {
	resolver        *lookup.Resolver
	rdap            *rdap.Client
	http            *http.Client
	bootstrapSource string
}

// newLookups builds the RDAP client on DOMAIND_RDAP_BOOTSTRAP when set, else
// on the newest of the built-in and stored copies; and the WHOIS fallback
// starting at DOMAIND_WHOIS_IANA_ADDR. A bootstrap file that cannot be read
// is bad configuration and stops the start; a URL that does not answer may
// be a passing outage, so it is logged and the stored or built-in copy used
// until the refresh task reaches it.
func newLookups(ctx context.Context, cfg *config.Config, db *gorm.DB, rdb redis.UniversalClient, m *metrics.Metrics, log *slog.Logger) (*lookups, error) {
	hc := &http.Client{Timeout: lookupTimeout}
	boot, err := lookup.StoredBootstrap(ctx, db)
	if err != nil {
		return nil, err
	}
	source := lookup.IANABootstrapURL
	if cfg.RDAPBootstrap != "" {
		source = cfg.RDAPBootstrap
		b, err := rdap.LoadBootstrap(ctx, hc, cfg.RDAPBootstrap)
		switch {
		case err == nil:
			boot = b
		case strings.HasPrefix(cfg.RDAPBootstrap, "http://") || strings.HasPrefix(cfg.RDAPBootstrap, "https://"):
			log.WarnContext(ctx, "DOMAIND_RDAP_BOOTSTRAP unreachable; using the stored or built-in bootstrap until the refresh reaches it", "err", err)
		default:
			return nil, &config.Error{Var: "DOMAIND_RDAP_BOOTSTRAP", Msg: err.Error()}
		}
	}
	// Registries' answers are not ours: every RDAP request and every WHOIS
	// connection goes through the SSRF guard, and RDAP redirects only to https.
	// Every server also has a query budget shared by all workers.
	guard := fetch.New(fetch.Options{Allow: cfg.FetchAllowCIDRs, Timeout: lookupTimeout, HTTPSRedirectsOnly: true})
	budget := &lookup.ServerBudget{Limiter: ratelimit.New(rdb, time.Now), Policy: lookup.DefaultServerBudget, Log: log,
		Degraded: func() { m.Degraded("registry_budget") }}
	rc := rdap.New(guard, boot, rdap.DefaultPerHost, budget.Take)
	fallback := whois.New(cfg.WhoisIANAAddr, whois.WithDialer(guard.DialContext), whois.WithThrottle(budget.Take))
	return &lookups{
		resolver:        &lookup.Resolver{RDAP: rc, Fallback: fallback},
		rdap:            rc,
		http:            hc,
		bootstrapSource: source,
	}, nil
}
