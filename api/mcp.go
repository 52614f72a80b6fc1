package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	mcpapi "github.com/domaind/domaind/api/mcp"
	"github.com/domaind/domaind/internal/domaininfo"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/market"
	"github.com/domaind/domaind/internal/oauth"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/search"
	"github.com/domaind/domaind/internal/tools"
)

// mountMCP serves the MCP server (api/mcp) at /mcp, with its
// protected-resource metadata: its tools call what the HTTP API calls,
// and spend the same limits, per user.
func (s *Server) mountMCP(e *gin.Engine) {
	limits := map[string]ratelimit.Policy{mcpapi.ToolPricing: pricingLimit, mcpapi.ToolRequirements: pricingLimit,
		mcpapi.ToolWhois: whoisQuota, mcpapi.ToolListings: listingsLimit, mcpapi.ToolSearch: searchLimit}
	if t, ok := s.suggestTool(); ok {
		limits[mcpapi.ToolSuggest] = toolPolicy(t)
	}
	h := mcpapi.Handler(mcpapi.Deps{
		Verify:              s.verifyForMCP,
		ResourceMetadataURL: s.base() + "/.well-known/oauth-protected-resource" + mcpapi.Path,
		Catalog:             s.catalog,
		LookUp: func(ctx context.Context, domain string) (domaininfo.Record, bool, error) {
			a, failed, err := s.whois.LookUp(ctx, domain)
			return a.Record, failed, err
		},
		Listings: s.mcpListings,
		Suggest:  s.mcpSuggest,
		Search:   s.mcpSearch,
		Limiter:  s.limiter,
		Limits:   limits,
		GiveBack: func(ctx context.Context, p ratelimit.Policy, client string, r ratelimit.Result) {
			s.giveBackQuota(ctx, p, client, r, false)
		},
		Version: "1", Log: s.log, Now: s.now,
	})
	serve := func(c *gin.Context) {
		h.ServeHTTP(&refusalWriter{ResponseWriter: c.Writer, c: c}, c.Request)
	}
	e.POST(mcpapi.Path, serve) // stateless: no session to GET or DELETE
	e.GET("/.well-known/oauth-protected-resource"+mcpapi.Path, s.protectedResourceMetadata(mcpapi.Path, "domaind MCP server"))
}

// verifyForMCP checks an access token for /mcp: one bound to the MCP
// server, to the service as a whole, or to no resource.
func (s *Server) verifyForMCP(ctx context.Context, token string) (mcpapi.Grant, error) {
	t, err := s.oauth.Authenticate(ctx, token, s.base(), s.base()+mcpapi.Path)
	if err != nil {
		if errors.Is(err, oauth.ErrInvalidToken) {
			return mcpapi.Grant{}, mcpapi.ErrInvalidToken
		}
		return mcpapi.Grant{}, err
	}
	return mcpapi.Grant{UserID: t.UserID, Scopes: strings.Fields(t.Scope)}, nil
}

// refusalWriter writes the MCP handler's transport refusals (a missing or
// invalid token, a method or body it does not take: plain text from the
// SDK) in the service's error shape, with their status and message.
// Everything else passes through.
type refusalWriter struct {
	http.ResponseWriter
	c      *gin.Context
	status int // a refusal's, until its message is written
}

func (w *refusalWriter) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *refusalWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		return w.ResponseWriter.Write(b)
	}
	if !w.c.Writer.Written() {
		msg := strings.TrimSpace(string(b))
		code := refusalCodes[w.status]
		switch {
		case w.status == http.StatusUnauthorized && msg != "no bearer token":
			code = fault.InvalidToken
		case code == "" && w.status >= 500:
			code = fault.Internal
		case code == "":
			code = fault.BadRequest
		}
		w.Header().Del("Content-Type")
		w.c.AbortWithStatusJSON(w.status, gin.H{"error": gin.H{"code": code, "message": msg}})
	}
	return len(b), nil
}

// Flush sends what is written so far (the SDK streams some answers).
func (w *refusalWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// refusalCodes are the codes of the statuses the MCP handler refuses with.
var refusalCodes = map[int]fault.Code{
	http.StatusBadRequest: fault.BadRequest, http.StatusUnauthorized: fault.Unauthorized, http.StatusForbidden: fault.Forbidden,
	http.StatusNotFound: fault.NotFound, http.StatusMethodNotAllowed: fault.MethodNotAllowed,
	http.StatusRequestEntityTooLarge: fault.PayloadTooLarge,
}

// mcpListings is marketplace_listings: the marketplace's listings as GET
// /api/market/listings finds them (market.Service.Listings).
func (s *Server) mcpListings(ctx context.Context, in mcpapi.ListingsInput, showPrices bool) (mcpapi.ListingsPage, error) {
	page, err := s.market.Listings(ctx, market.Query{Sort: in.Sort, Q: in.Q, TLD: in.TLD, MaxDollars: in.MaxDollars, Limit: in.Limit,
		Cursor: in.Cursor}, showPrices)
	if err != nil {
		return mcpapi.ListingsPage{}, err
	}
	out := mcpapi.ListingsPage{Listings: make([]mcpapi.Listing, len(page.Listings)), Total: page.Total, NextCursor: page.NextCursor}
	for i, l := range page.Listings {
		out.Listings[i] = mcpapi.Listing{Domain: l.Domain, TLD: l.TLD, Currency: l.Currency, ListedAt: l.CreatedAt.UTC()}
		if showPrices {
			out.Listings[i].BINCents, out.Listings[i].FloorCents = l.BINCents, l.FloorCents
		}
	}
	return out, nil
}

// suggestTool is the domain-suggest tool of POST /api/tools/{slug}, if
// the server has the free tools.
func (s *Server) suggestTool() (tools.Tool, bool) {
	if s.tools == nil {
		return tools.Tool{}, false
	}
	return s.tools.Get(suggestSlug)
}

const suggestSlug = "domain-suggest"

// mcpSuggest is suggest_domains: domain-suggest's checks and run, as
// POST /api/tools/domain-suggest runs it (with its cache).
func (s *Server) mcpSuggest(ctx context.Context, in tools.SuggestInput) (tools.SuggestResult, error) {
	t, ok := s.suggestTool()
	if !ok {
		return tools.SuggestResult{}, fault.New(fault.Unavailable, "name suggestions are not available on this server")
	}
	body, err := json.Marshal(in)
	if err != nil {
		return tools.SuggestResult{}, err
	}
	input, err := t.Parse(ctx, body)
	if err != nil {
		return tools.SuggestResult{}, err
	}
	result, _, err := s.runInline(ctx, t, input)
	if err != nil {
		return tools.SuggestResult{}, err
	}
	var r tools.SuggestResult
	if err := json.Unmarshal(result, &r); err != nil {
		return tools.SuggestResult{}, fmt.Errorf("read domain-suggest's result: %w", err)
	}
	return r, nil
}

// mcpSearch is search_domains: the rows of POST /api/domain/search's
// stream for q, in the names' order.
func (s *Server) mcpSearch(ctx context.Context, q string, showPrices bool, client string) ([]mcpapi.SearchRow, error) {
	names, err := s.search.Names(q)
	if err != nil {
		return nil, err
	}
	rows, wait, err := s.search.Check(ctx, names, showPrices, client)
	if err != nil {
		return nil, err
	}
	defer wait()
	byName := map[string]search.Row{}
	for range names {
		r := <-rows
		byName[r.Domain] = r
	}
	out := make([]mcpapi.SearchRow, len(names))
	for i, n := range names {
		out[i] = newMCPSearchRow(byName[n.ASCII])
	}
	return out, nil
}

// newMCPSearchRow is a search row as search_domains answers it: cents
// rather than dollars, the facts flat.
func newMCPSearchRow(r search.Row) mcpapi.SearchRow {
	out := mcpapi.SearchRow{Domain: r.Domain, DomainUnicode: r.DomainUnicode, State: r.State, StateLabel: r.StateLabel,
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
