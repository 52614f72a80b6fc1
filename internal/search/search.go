// Package search is the domain search (SPEC §2.5): the names a query
// checks, each name's row decided from the service's own data (the synced
// TLDs and prices, the marketplace, cached lookups) and the registry, all
// at once, each row handed over as soon as it is decided; and the
// warm-ups, background WHOIS lookups of registered names without a cached
// summary, so that the next search shows one.
package search

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/domaind/domaind/internal/availability"
	"github.com/domaind/domaind/internal/catalog"
	"github.com/domaind/domaind/internal/domaininfo"
	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/market"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/models"
)

// Row states the search adds to availability's. StateForSale: the name is
// listed in the marketplace. StateInvalid: the label breaks one of the
// TLD's syntax rules that the catalog holds (labelRules), checked by
// availability.CheckLabel before any registry is asked; the row's
// state_label names the rule: an internationalised label under a TLD
// without IDN support, or a label shorter or longer than the TLD allows.
const (
	StateForSale = "for_sale"
	StateInvalid = "invalid"
)

// catalogCurrency is the currency of the synced prices: the TLD sync reads
// the registry's USD price list.
const catalogCurrency = "USD"

// stateLabels are the short human labels of the row states.
var stateLabels = map[string]string{
	availability.Available:   "Available",
	availability.Registered:  "Taken",
	availability.Premium:     "Premium",
	StateForSale:             "For sale",
	availability.Reserved:    "Reserved",
	availability.Unsupported: "TLD not offered",
	StateInvalid:             "Not allowed under this TLD",
	availability.Unknown:     "Could not check",
}

// Row sources (Meta.Source): what decided the row's state.
const (
	sourceRegistry    = "registry"
	sourceCache       = "cache"
	sourceMarketplace = "marketplace"
	sourceCatalog     = "catalog" // our synced TLD list
	sourceSyntax      = "syntax"
)

// Row is one name's row of the stream (SPEC §2.5).
type Row struct {
	Kind   string `json:"kind"`
	Domain string `json:"domain"`
	// DomainUnicode is the name with its A-labels decoded (the same as
	// Domain for a name without any).
	DomainUnicode string        `json:"domain_unicode"`
	State         string        `json:"state"`
	StateLabel    string        `json:"state_label"`
	Available     bool          `json:"available"`
	Price         *Price        `json:"price"`
	Listing       *market.View  `json:"listing"`
	WhoisSummary  *WhoisSummary `json:"whois_summary"`
	Cached        bool          `json:"cached"`
	Meta          Meta          `json:"meta"`
}

// Price is new-registration pricing for one year, never masked.
type Price struct {
	RegisterCents *int64 `json:"register_cents"`
	RenewCents    *int64 `json:"renew_cents"`
	Currency      string `json:"currency"`
	Premium       bool   `json:"premium"`
}

// WhoisSummary comes from a lookup cached in the last hour.
type WhoisSummary struct {
	Registrar      string `json:"registrar"`
	ExpirationDate string `json:"expiration_date"`
	LookupID       string `json:"lookup_id"`
}

// Meta says how a row was decided.
type Meta struct {
	Source   string `json:"source"`
	Provider string `json:"provider"`
	TookMS   int64  `json:"took_ms"`
	// Error says why the state is unknown.
	Error string `json:"error,omitempty"`
}

// Deps are what the search decides rows with.
type Deps struct {
	Checker *availability.Checker
	Catalog *catalog.Catalog
	Market  *market.Service
	// Lookups are the cached lookups (WHOIS summaries, warm-up claims);
	// Whois starts a warm-up's lookup.
	Lookups *lookup.Cache
	Whois   *lookup.Queue
	// Limiter spends the warm-ups' budgets.
	Limiter *ratelimit.Limiter
	// TLDs are the TLDs a plain label.tld search also checks
	// (DOMAIND_SEARCH_TLDS).
	TLDs []string
	Log  *slog.Logger
	// WarmFunc runs each warm-up; nil is Service.Warm.
	WarmFunc func(ctx context.Context, client, domain string)
}

// Service is the search. Close it to stop its warm-ups.
type Service struct {
	d       Deps
	warmups *warmups
}

// New returns the search of d, with its warm-ups started.
func New(d Deps) *Service {
	s := &Service{d: d}
	warm := d.WarmFunc
	if warm == nil {
		warm = s.Warm
	}
	s.warmups = newWarmups(warm)
	return s
}

// Close drops the queued warm-ups, cancels the running ones and waits for
// them to return.
func (s *Service) Close() { s.warmups.close() }

// ErrNoQuery is a search without a name.
var ErrNoQuery = fault.Invalid("q", "is required: the domain to check")

// wordTLD is the TLD a query without one is searched on first.
const wordTLD = "com"

// Names returns the names a search for query checks: the queried name (its
// registrable domain) first, then, for a plain label.tld query, the same
// label on each of the search TLDs. A query that is not a name is a
// validation error.
func (s *Service) Names(query string) ([]domainname.Name, error) {
	if strings.TrimSpace(query) == "" {
		return nil, ErrNoQuery
	}
	q, err := domainname.ParseQuery(query, wordTLD)
	if err != nil {
		return nil, fault.InvalidErr("q", err)
	}
	primary := q
	if !q.IsRegistrable() {
		primary, _ = domainname.Parse(q.Registrable) // a registrable name parses
	}
	names := []domainname.Name{primary}
	if !q.IsPlainLabelTLD() {
		return names, nil
	}
	for _, tld := range s.d.TLDs {
		if tld == primary.TLD {
			continue
		}
		if n, err := domainname.WithTLD(primary.Label, tld); err == nil {
			names = append(names, n)
		}
	}
	return names, nil
}

// Check checks names at once and sends each one's row on the channel it
// returns as soon as it is decided (the channel holds them all: no check
// waits for a reader); wait returns once every check has ended. A
// registered name without a cached lookup gets its WHOIS warmed up for
// client. Cancel ctx to stop the checks still running.
func (s *Service) Check(ctx context.Context, names []domainname.Name, showPrices bool, client string) (rows <-chan Row, wait func(), err error) {
	f, err := s.facts(ctx, names)
	if err != nil {
		return nil, nil, err
	}
	out := make(chan Row, len(names))
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Go(func() {
			row := s.row(ctx, n, f, showPrices)
			out <- row
			if (row.State == availability.Registered || row.State == StateForSale) && row.WhoisSummary == nil {
				s.warmups.add(ctx, client, n.Registrable) // never waits
			}
		})
	}
	return out, wg.Wait, nil
}

// Rows checks the names of query and returns all their rows in the
// names' order, once the last is decided: the search for a caller that
// does not stream.
func (s *Service) Rows(ctx context.Context, query string, showPrices bool, client string) ([]Row, error) {
	names, err := s.Names(query)
	if err != nil {
		return nil, err
	}
	rows, wait, err := s.Check(ctx, names, showPrices, client)
	if err != nil {
		return nil, err
	}
	defer wait()
	byName := make(map[string]Row, len(names))
	for range names {
		r := <-rows
		byName[r.Domain] = r
	}
	out := make([]Row, len(names))
	for i, n := range names {
		out[i] = byName[n.ASCII]
	}
	return out, nil
}

// facts is what the search knows from the service's own data before it
// asks the registry: the synced TLDs and prices, marketplace listings,
// cached lookups.
type facts struct {
	catalog  *catalog.Snapshot
	listings map[string]models.Listing
	answers  map[string]lookup.Answer
}

func (f *facts) price(tld, op string) *int64 {
	p, _ := f.catalog.Price(tld, op)
	return p
}

func (s *Service) facts(ctx context.Context, names []domainname.Name) (*facts, error) {
	var domains, registrable []string
	for _, n := range names {
		domains = append(domains, n.ASCII)
		registrable = append(registrable, n.Registrable)
	}
	cat, err := s.d.Catalog.Get(ctx)
	if err != nil {
		return nil, err
	}
	f := &facts{catalog: cat}
	if f.listings, err = s.d.Market.Among(ctx, domains); err != nil {
		return nil, err
	}
	if f.answers, err = s.d.Lookups.GetMany(ctx, registrable); err != nil {
		return nil, err
	}
	return f, nil
}

// row decides one name's row.
func (s *Service) row(ctx context.Context, n domainname.Name, f *facts, showPrices bool) Row {
	start := time.Now()
	row := Row{Kind: "row", Domain: n.ASCII, DomainUnicode: n.Unicode, Meta: Meta{Provider: s.d.Checker.Provider()}}
	tld, sold := f.catalog.TLDs[n.TLD]
	var syntaxErr *availability.SyntaxError
	switch {
	case !sold || tld.Unavailable:
		row.State, row.Meta.Source = availability.Unsupported, sourceCatalog
	case errors.As(availability.CheckLabel(n.Label, n.TLD, labelRules(tld)), &syntaxErr):
		row.State, row.Meta.Source = StateInvalid, sourceSyntax
	default:
		if l, ok := f.listings[n.ASCII]; ok {
			v := market.NewView(l, showPrices)
			row.State, row.Listing, row.Meta.Source = StateForSale, &v, sourceMarketplace
			break
		}
		r := s.d.Checker.Check(ctx, n.ASCII)
		row.State, row.Cached = r.State, r.Cached
		row.Available = r.State == availability.Available || r.State == availability.Premium
		row.Meta.Source = sourceRegistry
		if r.Cached {
			row.Meta.Source = sourceCache
		}
		if r.Err != nil {
			row.Meta.Error = checkError(ctx, r.Err)
		}
		if r.Premium {
			row.Price = premiumPrice(r, f.price(n.TLD, registry.OpRenew))
		}
	}
	if row.Price == nil && row.State != availability.Unsupported {
		row.Price = &Price{RegisterCents: f.price(n.TLD, registry.OpRegister), RenewCents: f.price(n.TLD, registry.OpRenew), Currency: catalogCurrency}
	}
	if a, ok := f.answers[n.Registrable]; ok && a.Found {
		row.WhoisSummary = &WhoisSummary{Registrar: a.Record.Registrar, ExpirationDate: domaininfo.FormatDate(a.Record.Expires), LookupID: a.LookupID}
	}
	row.StateLabel = stateLabels[row.State]
	if syntaxErr != nil {
		row.StateLabel = syntaxErr.Reason()
	}
	row.Meta.TookMS = time.Since(start).Milliseconds()
	return row
}

// labelRules are the syntax rules the catalog holds for t's labels. IDN
// support comes from the metadata, which every synced row has; a row synced
// before its syntax was stored has no length rules until the next sync.
func labelRules(t models.TLD) registry.DomainSyntax {
	r := t.Syntax
	r.IDNSupport = t.Metadata.IDNSupport
	return r
}

// premiumPrice is the price of a premium name: the registry's create price
// in the currency the registry named, and the catalog's renew price only
// when that is the catalog's currency (one price never mixes currencies).
func premiumPrice(r availability.Result, catalogRenew *int64) *Price {
	p := &Price{RegisterCents: &r.Cents, Currency: r.Currency, Premium: true}
	if p.Currency == "" { // a registry that names none quotes in the currency of its price list
		p.Currency = catalogCurrency
	}
	if p.Currency == catalogCurrency {
		p.RenewCents = catalogRenew
	}
	return p
}

// checkError is the client-safe reason of a failed check.
func checkError(ctx context.Context, err error) string {
	switch {
	case ctx.Err() != nil:
		return "search cancelled"
	case errors.Is(err, availability.ErrTimeout):
		return "the registry did not answer in time"
	}
	return "the registry check failed"
}
