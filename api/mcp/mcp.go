// Package mcp serves the service's domain tools to AI agents over the
// Model Context Protocol (Streamable HTTP at Path), built on the official
// Go SDK, behind the service's own OAuth 2.1: a request without a valid
// access token for this resource gets 401 with an RFC 9728 challenge that
// names /mcp's protected-resource metadata, from which an MCP client
// discovers the authorization server, registers itself (RFC 7591) and
// asks the signed-in person for consent (PKCE S256), as the SDKs' own
// OAuth clients do.
//
// Each tool is a thin call into what the HTTP API calls, with the same
// validation, and limits spent per signed-in user rather than per
// address. The server is stateless (no Mcp-Session-Id; every request is
// its own session), so any API process can answer any request, and
// answers are plain JSON rather than event streams.
package mcp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/catalog"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/market"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/search"
	domaintools "github.com/domaind/domaind/internal/tools"
)

// Path is where the server is mounted.
const Path = "/mcp"

// Grant is what a valid access token grants: whose it is, and its
// scopes.
type Grant struct {
	UserID string
	Scopes []string
}

// ErrInvalidToken is Verify's answer to a token that is malformed,
// expired, revoked, or bound to another resource.
var ErrInvalidToken = auth.ErrInvalidToken

// Deps is what the server is built from.
type Deps struct {
	// Verify checks an access token for this resource, its expiry
	// included.
	Verify func(ctx context.Context, token string) (Grant, error)
	// ResourceMetadataURL is /mcp's protected-resource metadata (RFC 9728),
	// named in every 401 challenge.
	ResourceMetadataURL string
	// Catalog is the synced TLDs and prices (tld_pricing,
	// tld_requirements).
	Catalog *catalog.Catalog
	// Whois looks up registration records as POST /api/tools/whois
	// does (whois_lookup).
	Whois Whois
	// Market is the marketplace of GET /api/market/listings
	// (marketplace_listings).
	Market *market.Service
	// Search is the domain search of POST /api/domain/search
	// (search_domains).
	Search *search.Service
	// Tools runs the free tools inline, as POST /api/tools/{slug} does
	// (suggest_domains).
	Tools *domaintools.Inline
	// Limiter spends Limits, each tool's policy by its name, per user.
	Limiter *ratelimit.Limiter
	Limits  map[string]ratelimit.Policy
	// GiveBack gives back r, a unit of day quota p that client spent on a
	// call that failed on the service's side, as the HTTP API does (within
	// the client's refund budget).
	GiveBack func(ctx context.Context, p ratelimit.Policy, client string, r ratelimit.Result)
	Version  string
	Log      *slog.Logger
	Now      func() time.Time
}

// Whois looks up the registration record of a registrable domain
// (lookup.Queue); failed says a failure was the service's or the
// registries', so that the caller's quota unit may go back.
type Whois interface {
	LookUp(ctx context.Context, domain string) (a lookup.Answer, failed bool, err error)
}

// Handler returns the MCP server of d, bearer-protected.
func Handler(d Deps) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "domaind", Title: "domaind domain tools", Version: d.Version},
		&mcp.ServerOptions{Instructions: instructions})
	t := &tools{Deps: d}
	addTool(t, s, &mcp.Tool{Name: ToolSearch, Title: "Domain search",
		Description: "Whether a domain name can be registered, and at what price: the name asked for and, for a name.tld, the " +
			"same label under the common TLDs, each checked with the registry or found for sale in the marketplace."}, t.search)
	addTool(t, s, &mcp.Tool{Name: ToolPricing, Title: "TLD price",
		Description: "The price in USD cents of registering, renewing or transferring a name under one TLD (for example com, io, co.uk). " +
			"price_cents is null when the registry does not offer the operation.",
		InputSchema: inputSchema[PricingInput](map[string]bound{"op": {enum: registry.Ops}})}, t.pricing)
	addTool(t, s, &mcp.Tool{Name: ToolRequirements, Title: "TLD registration rules",
		Description: "What registering a name under one TLD requires: IDN support, DNSSEC, the registration periods, restrictions " +
			"(local presence, documents), and when the rules were last synced from the registry."}, t.requirements)
	addTool(t, s, &mcp.Tool{Name: ToolWhois, Title: "WHOIS lookup",
		Description: "Who holds a registered domain and until when: registrar, statuses, dates, nameservers, from RDAP or the WHOIS " +
			"fallback. www.example.com is looked up as example.com. A name nobody has registered is an error saying so."}, t.whois)
	addTool(t, s, &mcp.Tool{Name: ToolListings, Title: "Marketplace listings",
		Description: "Names for sale in the marketplace, newest first or by price, filtered by words they contain, TLD, or a " +
			"maximum price. Prices are in cents and shown only to tokens with the pricing:read scope. Page with next_cursor.",
		InputSchema: inputSchema[ListingsInput](map[string]bound{"sort": {enum: market.Sorts},
			"limit": {min: 1, max: market.MaxLimit}, "max_dollars": {min: 0, max: market.MaxPriceDollars}})}, t.listings)
	addTool(t, s, &mcp.Tool{Name: ToolSuggest, Title: "Domain name ideas",
		Description: "Name ideas made of one to five keywords under common TLDs (or the ones given), each checked with the " +
			"registry: available names with their registration price in cents, and those taken or not answered for.",
		InputSchema: inputSchema[domaintools.SuggestInput](map[string]bound{"limit": {min: 1, max: domaintools.MaxSuggestions},
			"tlds": {maxItems: domaintools.MaxSuggestTLDs}})}, t.suggest)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: d.Log})
	// Verify judges expiry by the service's clock; the middleware's own
	// check (by the machine's) is left out, so that one clock decides.
	return auth.RequireBearerToken(d.verifier, &auth.RequireBearerTokenOptions{ResourceMetadataURL: d.ResourceMetadataURL,
		AllowMissingExpiration: true})(h)
}

const instructions = "Domain name tools of domaind: search names and their availability, name ideas, names for sale in the " +
	"marketplace, the prices and registration rules of TLDs, and who holds a registered name. Prices are USD cents."

// verifier is Verify as the SDK's bearer middleware calls it. The token's
// info carries the caller's address (WithAddress) to the tools.
func (d Deps) verifier(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
	g, err := d.Verify(ctx, token)
	if err != nil {
		return nil, err
	}
	info := &auth.TokenInfo{UserID: g.UserID, Scopes: g.Scopes}
	if a, ok := r.Context().Value(addressKey{}).(string); ok && a != "" {
		info.Extra = map[string]any{extraAddress: a}
	}
	return info, nil
}

// addressKey holds, in a request's context, the caller's address as the
// HTTP API's limits know it.
type addressKey struct{}

// extraAddress is the key of the caller's address in a token's info.
const extraAddress = "address"

// WithAddress returns ctx carrying the request's client address (its
// rate-limit identity): the tools spend their limits per address as well
// as per user, as the HTTP API does, so that many free accounts from one
// address share the address's limits.
func WithAddress(ctx context.Context, address string) context.Context {
	return context.WithValue(ctx, addressKey{}, address)
}

// tools are the tool handlers of one server.
type tools struct {
	Deps
}

// addTool adds a tool whose handler h takes In and answers Out (h spends
// the tool's limit; whois only once its input is valid, suggestions and
// search first, as their HTTP routes do),
// answering errors as tool errors that say what to fix, read as the HTTP
// API reads them (an error that is not ours is logged and answered as a
// failure of the service, without its detail).
func addTool[In, Out any](t *tools, s *mcp.Server, tool *mcp.Tool, h func(context.Context, In) (Out, error)) {
	mcp.AddTool(s, tool, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		out, err := h(context.WithValue(ctx, callerKey{}, caller{tool: tool.Name, who: req.Extra.TokenInfo}), in)
		if err == nil {
			return nil, out, nil
		}
		e, known := httpjson.Coded(err) // the HTTP API's reading of errors
		text := e.Message
		if !known {
			t.Log.ErrorContext(ctx, "mcp tool failed", "tool", tool.Name, "err", err)
			text = "the service failed to answer; try again in a moment"
		}
		// A plain error is the SDK's tool error: its text, no structured
		// content (a failed call has no output).
		return nil, out, errors.New(text)
	})
}

// callerKey holds, in a tool call's context, the caller: the tool called,
// and the token it was called with.
type callerKey struct{}

type caller struct {
	tool string
	who  *auth.TokenInfo
}

// spent is the units of a tool's limit a call spent, for giveBack: one
// per client it counts for (the token's user, the caller's address).
type spent struct {
	policy ratelimit.Policy
	units  []unit
}

type unit struct {
	client string
	r      ratelimit.Result
}

// spend spends a unit of the called tool's limit for each client the call
// counts for; refused by any, it spends none.
func (t *tools) spend(ctx context.Context) (spent, error) {
	c, _ := ctx.Value(callerKey{}).(caller)
	p, ok := t.Limits[c.tool]
	if !ok || c.who == nil {
		return spent{}, nil
	}
	s := spent{policy: p}
	for _, client := range clientsOf(ctx) {
		r, err := t.Limiter.Allow(ctx, p, client)
		if err == nil && !r.Allowed {
			code := fault.RateLimited
			if p.Kind == ratelimit.DayQuota {
				code = fault.QuotaExceeded
			}
			err = fault.New(code, "rate limit reached: %s allows %d calls %s; try again in %d s",
				c.tool, p.Limit, per(p), httpjson.RetryAfter(r))
		}
		if err != nil {
			t.undo(ctx, s)
			return spent{}, err
		}
		s.units = append(s.units, unit{client, r})
	}
	return s, nil
}

// undo returns the units of s: the call was refused by a later client.
func (t *tools) undo(ctx context.Context, s spent) {
	for _, u := range s.units {
		if err := t.Limiter.Refund(context.WithoutCancel(ctx), s.policy, u.client, u.r); err != nil {
			t.Log.WarnContext(ctx, "returning a unit of a refused call failed", "policy", s.policy.Name, "err", err)
		}
	}
}

// giveBack gives back the units s of a call that failed on our side.
func (t *tools) giveBack(ctx context.Context, s spent) {
	if t.GiveBack == nil {
		return
	}
	for _, u := range s.units {
		t.GiveBack(ctx, s.policy, u.client, u.r)
	}
}

// per says a policy's window: "a day", "an hour", "a minute", "per 15
// minutes".
func per(p ratelimit.Policy) string {
	w := ratelimit.PerWindow(p.Window)
	switch {
	case p.Kind == ratelimit.DayQuota:
		return "a day"
	case w == "hour":
		return "an hour"
	case strings.Contains(w, " "):
		return "per " + w
	}
	return "a " + w
}
