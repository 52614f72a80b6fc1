package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/availability"
	"github.com/domaind/domaind/internal/catalog"
	"github.com/domaind/domaind/internal/domaininfo"
	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/requestid"
	"github.com/domaind/domaind/models"
)

// searchLimit is SPEC §8's domain search rate.
var searchLimit = ratelimit.PerMinute("search", 60)

// Row states the search adds to availability's. stateForSale: the name is
// listed in our marketplace. stateInvalid: the label breaks one of the
// TLD's syntax rules that the catalog holds (labelRules), checked by
// availability.CheckLabel before any registry is asked; the row's
// state_label names the rule: an internationalised label under a TLD
// without IDN support, or a label shorter or longer than the TLD allows.
const (
	stateForSale = "for_sale"
	stateInvalid = "invalid"
)

// catalogCurrency is the currency of the synced prices: the TLD sync reads
// the registry's USD price list.
const catalogCurrency = "USD"

// stateLabels are the short human labels of the row states.
var stateLabels = map[string]string{
	availability.Available:   "Available",
	availability.Registered:  "Taken",
	availability.Premium:     "Premium",
	stateForSale:             "For sale",
	availability.Reserved:    "Reserved",
	availability.Unsupported: "TLD not offered",
	stateInvalid:             "Not allowed under this TLD",
	availability.Unknown:     "Could not check",
}

// Row sources (meta.source): what decided the row's state.
const (
	sourceRegistry    = "registry"
	sourceCache       = "cache"
	sourceMarketplace = "marketplace"
	sourceCatalog     = "catalog" // our synced TLD list
	sourceSyntax      = "syntax"
)

type searchRequest struct {
	Q *string `json:"q"`
}

// The stream events of SPEC §2.5.
type (
	searchHeader struct {
		Kind         string   `json:"kind"`
		RequestID    string   `json:"request_id"`
		Primary      string   `json:"primary"`
		Domains      []string `json:"domains"`
		PrimaryIndex int      `json:"primary_index"`
	}
	searchRow struct {
		Kind   string `json:"kind"`
		Domain string `json:"domain"`
		// DomainUnicode is the name with its A-labels decoded (the same
		// as Domain for a name without any).
		DomainUnicode string        `json:"domain_unicode"`
		State         string        `json:"state"`
		StateLabel    string        `json:"state_label"`
		Available     bool          `json:"available"`
		Price         *rowPrice     `json:"price"`
		Listing       *listingView  `json:"listing"`
		WhoisSummary  *whoisSummary `json:"whois_summary"`
		Cached        bool          `json:"cached"`
		Meta          rowMeta       `json:"meta"`
	}
	searchMarker struct {
		Kind string `json:"kind"`
	}
	searchDone struct {
		Kind       string `json:"kind"`
		DurationMS int64  `json:"duration_ms"`
		Count      int    `json:"count"`
	}
)

// rowPrice is new-registration pricing for one year, never masked.
type rowPrice struct {
	RegisterCents *int64 `json:"register_cents"`
	RenewCents    *int64 `json:"renew_cents"`
	Currency      string `json:"currency"`
	Premium       bool   `json:"premium"`
}

// whoisSummary comes from a lookup cached in the last hour.
type whoisSummary struct {
	Registrar      string `json:"registrar"`
	ExpirationDate string `json:"expiration_date"`
	LookupID       string `json:"lookup_id"`
}

type rowMeta struct {
	Source   string `json:"source"`
	Provider string `json:"provider"`
	TookMS   int64  `json:"took_ms"`
	// Error says why the state is unknown.
	Error string `json:"error,omitempty"`
}

// searchDomains answers POST /api/domain/search with an NDJSON stream: a
// header, one row per name written as soon as its check completes (the
// checks run concurrently), primary_done right after the queried name's row,
// and done. A client that goes away cancels the checks still running.
func (s *Server) searchDomains(c *gin.Context) error {
	start := time.Now()
	var req searchRequest
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	if req.Q == nil {
		return errNoQuery
	}
	names, err := s.parseSearch(*req.Q)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(c.Request.Context())
	defer cancel()
	rows, wait, err := s.checkNames(ctx, names, pricesVisible(c), clientKey(c))
	if err != nil {
		return err
	}
	defer wait()

	h := c.Writer.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Cache-Control", "no-store")
	c.Status(http.StatusOK)
	out := newNDJSON(c.Writer, start)
	domains := make([]string, len(names))
	for i, n := range names {
		domains[i] = n.ASCII
	}
	out.write(searchHeader{Kind: "header", RequestID: requestid.From(ctx), Primary: names[0].ASCII, Domains: domains, PrimaryIndex: 0})

	for i := range names {
		row := <-rows
		out.write(row)
		if row.Domain == names[0].ASCII {
			out.write(searchMarker{Kind: "primary_done"})
		}
		if out.err != nil {
			cancel() // the client is gone: stop the checks still running
			break
		}
		if i == len(names)-1 {
			out.write(searchDone{Kind: "done", DurationMS: time.Since(start).Milliseconds(), Count: len(names)})
		}
	}
	return nil
}

var errNoQuery = fault.New(fault.Validation, "q is required: the domain to check")

// parseSearch returns the names a search for query checks: the queried
// name first (see searchNames).
func (s *Server) parseSearch(query string) ([]domainname.Name, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errNoQuery
	}
	q, err := domainname.ParseQuery(query, wordTLD)
	if err != nil {
		return nil, err
	}
	return s.searchNames(q), nil
}

// checkNames checks names at once and sends each one's row on the
// channel it returns as soon as it is decided (the channel holds them
// all: no check waits for a reader); wait returns once every check has
// ended. A registered name without a cached lookup gets its WHOIS warmed
// up for client. Cancel ctx to stop the checks still running.
func (s *Server) checkNames(ctx context.Context, names []domainname.Name, showPrices bool, client string) (rows <-chan searchRow, wait func(), err error) {
	facts, err := s.loadSearchFacts(ctx, names)
	if err != nil {
		return nil, nil, err
	}
	out := make(chan searchRow, len(names))
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Go(func() {
			row := s.searchRow(ctx, n, facts, showPrices)
			out <- row
			if (row.State == availability.Registered || row.State == stateForSale) && row.WhoisSummary == nil {
				s.warmups.add(ctx, client, n.Registrable) // never waits
			}
		})
	}
	return out, wg.Wait, nil
}

// wordTLD is the TLD a query without one is searched on first.
const wordTLD = "com"

// searchNames is the queried name (its registrable domain) first, then, for
// a plain label.tld query, the same label on each configured search TLD.
func (s *Server) searchNames(q domainname.Name) []domainname.Name {
	primary := q
	if !q.IsRegistrable() {
		primary, _ = domainname.Parse(q.Registrable) // a registrable name parses
	}
	names := []domainname.Name{primary}
	if !q.IsPlainLabelTLD() {
		return names
	}
	for _, tld := range s.cfg.SearchTLDs {
		if tld == primary.TLD {
			continue
		}
		if n, err := domainname.WithTLD(primary.Label, tld); err == nil {
			names = append(names, n)
		}
	}
	return names
}

// searchFacts is what the search knows from our own data before it asks the
// registry: the synced TLDs and prices, marketplace listings, cached lookups.
type searchFacts struct {
	catalog  *catalog.Snapshot
	listings map[string]models.Listing
	answers  map[string]lookup.Answer
}

func (f *searchFacts) price(tld, op string) *int64 {
	p, _ := f.catalog.Price(tld, op)
	return p
}

func (s *Server) loadSearchFacts(ctx context.Context, names []domainname.Name) (*searchFacts, error) {
	var domains, registrable []string
	for _, n := range names {
		domains = append(domains, n.ASCII)
		registrable = append(registrable, n.Registrable)
	}
	cat, err := s.catalog.Get(ctx)
	if err != nil {
		return nil, err
	}
	f := &searchFacts{catalog: cat}
	if f.listings, err = s.market.Among(ctx, domains); err != nil {
		return nil, err
	}
	if f.answers, err = s.lookups.GetMany(ctx, registrable); err != nil {
		return nil, err
	}
	return f, nil
}

// searchRow decides one name's row.
func (s *Server) searchRow(ctx context.Context, n domainname.Name, f *searchFacts, showPrices bool) searchRow {
	start := time.Now()
	row := searchRow{Kind: "row", Domain: n.ASCII, DomainUnicode: n.Unicode, Meta: rowMeta{Provider: s.checker.Provider()}}
	tld, sold := f.catalog.TLDs[n.TLD]
	var syntaxErr *availability.SyntaxError
	switch {
	case !sold || tld.Unavailable:
		row.State, row.Meta.Source = availability.Unsupported, sourceCatalog
	case errors.As(availability.CheckLabel(n.Label, n.TLD, labelRules(tld)), &syntaxErr):
		row.State, row.Meta.Source = stateInvalid, sourceSyntax
	default:
		if l, ok := f.listings[n.ASCII]; ok {
			v := newListingView(l, showPrices)
			row.State, row.Listing, row.Meta.Source = stateForSale, &v, sourceMarketplace
			break
		}
		r := s.checker.Check(ctx, n.ASCII)
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
		row.Price = &rowPrice{RegisterCents: f.price(n.TLD, registry.OpRegister), RenewCents: f.price(n.TLD, registry.OpRenew), Currency: catalogCurrency}
	}
	if a, ok := f.answers[n.Registrable]; ok && a.Found {
		row.WhoisSummary = &whoisSummary{Registrar: a.Record.Registrar, ExpirationDate: domaininfo.FormatDate(a.Record.Expires), LookupID: a.LookupID}
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
func premiumPrice(r availability.Result, catalogRenew *int64) *rowPrice {
	p := &rowPrice{RegisterCents: &r.Cents, Currency: r.Currency, Premium: true}
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

// warmups runs the search's warm-ups: background WHOIS lookups of
// registered names that have no cached summary, so that the next search
// shows one. They run on a few goroutines the Server owns (Server.Close
// waits for them), never on a request's: a search hands its warm-ups over
// without waiting and its stream ends right after the done event, whatever
// the database or Redis are doing.
//
// Handing over is best effort. A warm-up that finds the queue full, or the
// Server closing, is dropped, and one still queued when the Server closes
// is dropped too: a lost warm-up costs only a WHOIS summary that a later
// search warms again (ARCHITECTURE.md keeps the outbox for tasks whose loss
// matters; a warm-up that runs still creates its lookup through it). The
// once-per-name-per-10-minutes claim (lookup.Cache.ClaimWarm) is taken when
// a warm-up runs, so a dropped one does not hold the name's claim.
type warmups struct {
	run   func(ctx context.Context, client, domain string)
	queue chan warmup
	// ctx ends when the warm-ups are closed, cancelling the running ones.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type warmup struct {
	ctx    context.Context // the search's, for its values (request id) only
	client string          // the searching client's rate-limit identity
	domain string
}

// Warm-up bounds: concurrent warm-ups, queued ones, and one warm-up's time.
const (
	warmWorkers = 4
	warmQueue   = 256
	warmTimeout = 2 * time.Second
)

// newWarmups starts the workers of warm-ups that call run for each domain
// handed over; close stops them.
func newWarmups(run func(ctx context.Context, client, domain string)) *warmups {
	ctx, cancel := context.WithCancel(context.Background())
	w := &warmups{run: run, queue: make(chan warmup, warmQueue), ctx: ctx, cancel: cancel}
	for range warmWorkers {
		w.wg.Go(w.work)
	}
	return w
}

// add hands a warm-up of domain, asked for by client, over without
// waiting, and reports whether it was queued. (One queued as close runs is
// dropped with the queue.)
func (w *warmups) add(ctx context.Context, client, domain string) bool {
	if w.ctx.Err() != nil {
		return false
	}
	select {
	case w.queue <- warmup{ctx: context.WithoutCancel(ctx), client: client, domain: domain}:
		return true
	default:
		return false
	}
}

func (w *warmups) work() {
	for {
		select {
		case <-w.ctx.Done():
			return
		case job := <-w.queue:
			if w.ctx.Err() != nil { // closed while both were ready: drop it
				return
			}
			ctx, cancel := context.WithTimeout(job.ctx, warmTimeout)
			stop := context.AfterFunc(w.ctx, cancel)
			w.run(ctx, job.client, job.domain)
			stop()
			cancel()
		}
	}
}

// close drops the queued warm-ups, cancels the running ones and waits for
// them to return. Later warm-ups are dropped.
func (w *warmups) close() {
	w.cancel()
	w.wg.Wait()
}

// Warm-ups send queries to registries that nobody asked for by name, so
// they have budgets of their own, apart from the WHOIS quota: per client
// address, and per TLD for all clients together (well under the worker's
// per-server budget, lookup.DefaultServerBudget, which people's own
// lookups share).
var (
	warmupClientLimit = ratelimit.PerHour("warmup-client", 100)
	warmupTLDLimit    = ratelimit.PerMinute("warmup-tld", 60)
)

// warmLookup is one warm-up: it starts a lookup of a registered domain
// unless another search claimed the name in the last ten minutes, or the
// client's or the TLD's warm-up budget is spent.
func (s *Server) warmLookup(ctx context.Context, client, domain string) {
	ok, err := s.lookups.ClaimWarm(ctx, domain)
	if err == nil && ok {
		ok, err = s.spendWarmup(ctx, client, domain)
	}
	if err == nil && ok {
		err = s.whois.Start(ctx, models.NewID(), domain)
	}
	if err != nil {
		s.log.WarnContext(ctx, "background lookup not started", "domain", domain, "err", err)
	}
}

// spendWarmup spends a unit of the client's and of the TLD's warm-up
// budgets, or neither.
func (s *Server) spendWarmup(ctx context.Context, client, domain string) (bool, error) {
	byClient, err := s.limiter.Allow(ctx, warmupClientLimit, client)
	if err != nil || !byClient.Allowed {
		return false, err
	}
	byTLD, err := s.limiter.Allow(ctx, warmupTLDLimit, domain[strings.LastIndexByte(domain, '.')+1:])
	if err == nil && byTLD.Allowed {
		return true, nil
	}
	if rerr := s.limiter.Refund(ctx, warmupClientLimit, client, byClient); rerr != nil {
		s.log.WarnContext(ctx, "warm-up unit not given back", "err", rerr)
	}
	return false, err
}

// The stream's write deadlines, in place of the server's WriteTimeout: each
// event must reach a client within streamEventTimeout, and the stream ends
// by streamCap after it started, however slowly the client reads.
const (
	streamEventTimeout = 10 * time.Second
	streamCap          = time.Minute
)

// ndjson writes one JSON object per line and flushes it, remembering the
// first write error (a client that went away, or one too slow to read).
type ndjson struct {
	w   gin.ResponseWriter
	rc  *http.ResponseController
	enc *json.Encoder
	end time.Time // the stream's cap
	err error
}

func newNDJSON(w gin.ResponseWriter, start time.Time) *ndjson {
	return &ndjson{w: w, rc: http.NewResponseController(w), enc: json.NewEncoder(w), end: start.Add(streamCap)}
}

func (o *ndjson) write(v any) {
	if o.err != nil {
		return
	}
	deadline := time.Now().Add(streamEventTimeout)
	if deadline.After(o.end) {
		deadline = o.end
	}
	o.rc.SetWriteDeadline(deadline) // unsupported in tests' recorders
	if o.err = o.enc.Encode(v); o.err == nil {
		o.err = o.rc.Flush()
	}
}
