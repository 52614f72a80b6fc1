package mcp

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/domaininfo"
	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/market"
	"github.com/domaind/domaind/internal/oauth"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/search"
	domaintools "github.com/domaind/domaind/internal/tools"
)

// The tools' names.
const (
	ToolSearch       = "search_domains"
	ToolSuggest      = "suggest_domains"
	ToolPricing      = "tld_pricing"
	ToolRequirements = "tld_requirements"
	ToolWhois        = "whois_lookup"
	ToolListings     = "marketplace_listings"
)

// PricingInput asks for the price of an operation under a TLD.
type PricingInput struct {
	TLD string `json:"tld" jsonschema:"the TLD, without a leading dot: com, io, co.uk"`
	Op  string `json:"op" jsonschema:"register, renew, transfer or restore"`
}

// Price is a TLD's price of an operation, in USD cents (null when the
// registry does not offer it).
type Price struct {
	TLD        string `json:"tld"`
	Op         string `json:"op"`
	PriceCents *int64 `json:"price_cents"`
	Currency   string `json:"currency"`
}

func (t *tools) pricing(ctx context.Context, in PricingInput) (Price, error) {
	tld, err := parseTLD(in.TLD)
	if err != nil {
		return Price{}, err
	}
	if !slices.Contains(registry.Ops, in.Op) {
		return Price{}, fault.Invalid("op", "must be one of %s", strings.Join(registry.Ops, ", "))
	}
	if _, err := t.spend(ctx); err != nil {
		return Price{}, err
	}
	cat, err := t.Catalog.Get(ctx)
	if err != nil {
		return Price{}, err
	}
	if _, known := cat.TLDs[tld]; !known {
		return Price{}, fault.New(fault.NotFound, "%s is not a TLD we sell: check the spelling (com, io, co.uk)", tld)
	}
	cents, _ := cat.Price(tld, in.Op)
	return Price{TLD: tld, Op: in.Op, PriceCents: cents, Currency: "USD"}, nil
}

// TLDInput names a TLD.
type TLDInput struct {
	TLD string `json:"tld" jsonschema:"the TLD, without a leading dot: com, io, co.uk"`
}

// Requirements are a TLD's registration rules as the registry gave them
// (SPEC §2.8), with when they were synced and whether that is too long
// ago to trust.
type Requirements struct {
	TLD          string            `json:"tld"`
	Rules        registry.Metadata `json:"rules"`
	Source       string            `json:"source"`
	LastSyncedAt time.Time         `json:"last_synced_at"`
	Stale        bool              `json:"stale"`
}

func (t *tools) requirements(ctx context.Context, in TLDInput) (Requirements, error) {
	tld, err := parseTLD(in.TLD)
	if err != nil {
		return Requirements{}, err
	}
	if _, err := t.spend(ctx); err != nil {
		return Requirements{}, err
	}
	cat, err := t.Catalog.Get(ctx)
	if err != nil {
		return Requirements{}, err
	}
	r, ok := cat.TLDs[tld]
	if !ok {
		return Requirements{}, fault.New(fault.NotFound, "%s is not a TLD we have rules for: check the spelling (com, io, co.uk)", tld)
	}
	return Requirements{TLD: r.Name, Rules: r.Metadata, Source: r.Source, LastSyncedAt: r.LastSyncedAt.UTC(), Stale: r.Stale(t.Now())}, nil
}

// WhoisInput names a domain.
type WhoisInput struct {
	Domain string `json:"domain" jsonschema:"a domain name, such as example.com or www.example.co.uk"`
}

func (t *tools) whois(ctx context.Context, in WhoisInput) (domaininfo.Result, error) {
	if strings.TrimSpace(in.Domain) == "" {
		return domaininfo.Result{}, fault.Invalid("domain", "is required: a domain name such as example.com")
	}
	name, err := domainname.Parse(in.Domain)
	if err != nil {
		return domaininfo.Result{}, fault.Invalid("domain", "%v", err)
	}
	unit, err := t.spend(ctx)
	if err != nil {
		return domaininfo.Result{}, err
	}
	a, failed, err := t.Whois.LookUp(ctx, name.Registrable)
	// The unit goes back when the lookup failed, or when the service did
	// (an error answered 500 or 503), as POST /api/tools/whois gives it.
	if _, known := httpjson.Coded(err); failed || (err != nil && !known) {
		t.giveBack(ctx, unit)
	}
	if err != nil {
		return domaininfo.Result{}, err
	}
	return a.Record.Result(), nil
}

// parseTLD reads a TLD argument, a leading dot allowed.
func parseTLD(s string) (string, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), ".")
	if s == "" {
		return "", fault.Invalid("tld", "is required: a TLD such as com, io or co.uk")
	}
	tld, err := domainname.ParseTLD(s)
	if err != nil {
		return "", fault.Invalid("tld", "%v", err)
	}
	return tld, nil
}

// ListingsInput filters and pages the marketplace.
type ListingsInput struct {
	Q          string   `json:"q,omitempty" jsonschema:"words the names contain"`
	TLD        string   `json:"tld,omitempty" jsonschema:"only names under this TLD"`
	Sort       string   `json:"sort,omitempty" jsonschema:"newest (the default), price_asc or price_desc"`
	MaxDollars *float64 `json:"max_dollars,omitempty" jsonschema:"only names whose buy-now price is at most this many US dollars (needs the pricing:read scope)"`
	Limit      *int     `json:"limit,omitempty" jsonschema:"names per page, 1 to 200 (default 24)"`
	Cursor     string   `json:"cursor,omitempty" jsonschema:"the next_cursor of the page before"`
}

// Listing is a name for sale. Prices are cents, null without the
// pricing:read scope (or when the name has none).
type Listing struct {
	Domain     string    `json:"domain"`
	TLD        string    `json:"tld"`
	BINCents   *int64    `json:"bin_cents"`
	FloorCents *int64    `json:"floor_cents"`
	Currency   string    `json:"currency"`
	ListedAt   time.Time `json:"listed_at"`
}

// ListingsPage is a page of the marketplace: the names, how many match in
// all, and the cursor of the next page (null after the last).
type ListingsPage struct {
	Listings   []Listing `json:"listings"`
	Total      int64     `json:"total"`
	NextCursor *string   `json:"next_cursor"`
}

func (t *tools) listings(ctx context.Context, in ListingsInput) (ListingsPage, error) {
	limit := 0 // the default
	if in.Limit != nil {
		if limit = *in.Limit; limit == 0 { // 0 is out of range, as on GET /api/market/listings
			return ListingsPage{}, fault.Invalid("limit", "must be an integer from 1 to %d", market.MaxLimit)
		}
	}
	if _, err := t.spend(ctx); err != nil {
		return ListingsPage{}, err
	}
	show := pricesShown(ctx)
	page, err := t.Market.Listings(ctx, market.Query{Sort: in.Sort, Q: in.Q, TLD: in.TLD, MaxDollars: in.MaxDollars,
		Limit: limit, Cursor: in.Cursor}, show)
	if err != nil {
		return ListingsPage{}, err
	}
	out := ListingsPage{Listings: make([]Listing, len(page.Listings)), Total: page.Total, NextCursor: page.NextCursor}
	for i, l := range page.Listings {
		out.Listings[i] = Listing{Domain: l.Domain, TLD: l.TLD, Currency: l.Currency, ListedAt: l.CreatedAt.UTC()}
		if show {
			out.Listings[i].BINCents, out.Listings[i].FloorCents = l.BINCents, l.FloorCents
		}
	}
	return out, nil
}

func (t *tools) suggest(ctx context.Context, in domaintools.SuggestInput) (domaintools.SuggestResult, error) {
	if _, err := t.spend(ctx); err != nil {
		return domaintools.SuggestResult{}, err
	}
	if t.Tools == nil {
		return domaintools.SuggestResult{}, fault.New(fault.Unavailable, "name suggestions are not available on this server")
	}
	return t.Tools.Suggest(ctx, in)
}

// SearchInput is a domain search.
type SearchInput struct {
	Q string `json:"q" jsonschema:"a domain name such as example.com (checked, and for a name.tld the same label under the common TLDs too) or a word (checked under com first)"`
}

// SearchRow is one name's row of the search (SPEC §2.5): its state
// (available, registered, premium, for_sale, invalid, unsupported,
// unknown), the registration and renewal price of a year in cents, the
// marketplace's prices when it is for sale (null without pricing:read),
// and the holder's registrar and expiry when a lookup of the last hour
// knows them.
type SearchRow struct {
	Domain         string `json:"domain"`
	DomainUnicode  string `json:"domain_unicode"`
	State          string `json:"state"`
	StateLabel     string `json:"state_label"`
	Available      bool   `json:"available"`
	RegisterCents  *int64 `json:"register_cents"`
	RenewCents     *int64 `json:"renew_cents"`
	Currency       string `json:"currency,omitempty"`
	Premium        bool   `json:"premium"`
	ForSale        bool   `json:"for_sale"`
	BINCents       *int64 `json:"bin_cents"`
	FloorCents     *int64 `json:"floor_cents"`
	Registrar      string `json:"registrar,omitempty"`
	ExpirationDate string `json:"expiration_date,omitempty"`
	// Error says why the state is unknown.
	Error string `json:"error,omitempty"`
}

// SearchResult is a search's rows, the queried name's first.
type SearchResult struct {
	Rows []SearchRow `json:"rows"`
}

func (t *tools) search(ctx context.Context, in SearchInput) (SearchResult, error) {
	if _, err := t.spend(ctx); err != nil {
		return SearchResult{}, err
	}
	rows, err := t.Search.Rows(ctx, in.Q, pricesShown(ctx), clientOf(ctx))
	if err != nil {
		return SearchResult{}, err
	}
	out := SearchResult{Rows: make([]SearchRow, len(rows))}
	for i, r := range rows {
		out.Rows[i] = newSearchRow(r)
	}
	return out, nil
}

// newSearchRow is a search row as search_domains answers it: cents
// rather than dollars, the facts flat.
func newSearchRow(r search.Row) SearchRow {
	out := SearchRow{Domain: r.Domain, DomainUnicode: r.DomainUnicode, State: r.State, StateLabel: r.StateLabel,
		Available: r.Available, Error: r.Meta.Error, ForSale: r.Listing != nil}
	if p := r.Price; p != nil {
		out.RegisterCents, out.RenewCents, out.Currency, out.Premium = p.RegisterCents, p.RenewCents, p.Currency, p.Premium
	}
	if l := r.Listing; l != nil {
		out.BINCents, out.FloorCents = l.Price.BIN.Cents(), l.Price.Floor.Cents()
	}
	if w := r.WhoisSummary; w != nil {
		out.Registrar, out.ExpirationDate = w.Registrar, w.ExpirationDate
	}
	return out
}

// clientOf is the client a call's WHOIS warm-ups are started for: its
// token's user.
func clientOf(ctx context.Context) string {
	c, _ := ctx.Value(callerKey{}).(caller)
	if c.who == nil {
		return ""
	}
	return "user:" + c.who.UserID
}

// clientsOf are the clients a call's limits are counted for: its token's
// user and, when known, its address.
func clientsOf(ctx context.Context) []string {
	c, _ := ctx.Value(callerKey{}).(caller)
	if c.who == nil {
		return nil
	}
	out := []string{"user:" + c.who.UserID}
	if a, ok := c.who.Extra[extraAddress].(string); ok && a != "" {
		out = append(out, a)
	}
	return out
}

// pricesShown says the call's token may see marketplace prices.
func pricesShown(ctx context.Context) bool {
	c, _ := ctx.Value(callerKey{}).(caller)
	return c.who != nil && slices.Contains(c.who.Scopes, oauth.ScopePricingRead)
}
