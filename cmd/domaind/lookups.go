package main

import (
	"context"
	"net/http"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/lookup"
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

// newLookups builds the RDAP client on DOMAIND_RDAP_BOOTSTRAP when set (a
// file or URL that cannot be read stops the start, as bad configuration
// does), else on the newest of the built-in and stored copies; and the
// WHOIS fallback starting at DOMAIND_WHOIS_IANA_ADDR.
func newLookups(ctx context.Context, cfg *config.Config, db *gorm.DB) (*lookups, error) {
	hc := &http.Client{Timeout: lookupTimeout}
	boot, err := lookup.StoredBootstrap(ctx, db)
	if err != nil {
		return nil, err
	}
	source := lookup.IANABootstrapURL
	if cfg.RDAPBootstrap != "" {
		source = cfg.RDAPBootstrap
		if boot, err = rdap.LoadBootstrap(ctx, hc, cfg.RDAPBootstrap); err != nil {
			return nil, &config.Error{Var: "DOMAIND_RDAP_BOOTSTRAP", Msg: err.Error()}
		}
	}
	rc := rdap.New(hc, boot, rdap.DefaultPerHost)
	return &lookups{
		resolver:        &lookup.Resolver{RDAP: rc, Fallback: whois.New(cfg.WhoisIANAAddr)},
		rdap:            rc,
		http:            hc,
		bootstrapSource: source,
	}, nil
}
