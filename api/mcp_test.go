package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	mcpapi "github.com/domaind/domaind/api/mcp"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// mcpSession connects the MCP SDK's client to the service's /mcp the way
// an agent does: the first call is refused with the challenge, the
// client discovers the metadata, registers itself, sends the person to
// consent (here a signed-in browser that approves), and trades the code.
// It returns the session and the token the client got.
func mcpSession(t *testing.T, env *testEnv, base string) (*mcp.ClientSession, *oauthToken) {
	t.Helper()
	b := signedInBrowser(t, env, "agent-owner@example.com")
	redirect := "http://127.0.0.1:1/callback"
	var got oauthToken
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Price Watcher", RedirectURIs: []string{redirect}}},
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			loc := consent(t, b, args.URL, "approve")
			q := loc.Query()
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "price-watcher", Version: "1"}, nil)
	session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + mcpapi.Path, OAuthHandler: h}, nil)
	if err != nil {
		t.Fatalf("connect with OAuth: %v", err)
	}
	t.Cleanup(func() { session.Close() })
	ts, err := h.TokenSource(context.Background())
	if err == nil {
		tok, err2 := ts.Token()
		got, err = oauthToken{access: tok.AccessToken}, err2
	}
	if err != nil {
		t.Fatal(err)
	}
	return session, &got
}

type oauthToken struct{ access string }

// bearerSession connects the MCP SDK's client with a token it has.
func bearerSession(t *testing.T, base, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "price-watcher", Version: "1"}, nil)
	session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + mcpapi.Path,
		HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatalf("connect with a token: %v", err)
	}
	t.Cleanup(func() { session.Close() })
	return session
}

// bearer sends every request with an access token.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// call calls a tool and returns its structured answer, or its error text.
func call(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) (map[string]any, string) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		if res.StructuredContent != nil {
			t.Errorf("%s: the failed call carries structured content %v", tool, res.StructuredContent)
		}
		var text []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		return nil, strings.Join(text, " ")
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: structured content %s: %v", tool, raw, err)
	}
	return out, ""
}

// An agent authorizes itself against the service with the MCP SDK's own
// OAuth client and uses the tools: good input answers with the same
// figures as the HTTP API, bad input is a tool error saying what to fix.
// Without a token, or with a revoked one, /mcp is 401 with the challenge
// naming /mcp's metadata.
func TestMCPToolsBehindOAuth(t *testing.T) {
	t.Parallel()
	env, srv := servedEnv(t)
	seedTLDs(t, env)
	ctx := context.Background()

	res, err := http.Post(srv.URL+mcpapi.Path, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	metadata := srv.URL + "/.well-known/oauth-protected-resource/mcp"
	if res.StatusCode != 401 || !strings.Contains(res.Header.Get("WWW-Authenticate"), `resource_metadata="`+metadata+`"`) {
		t.Fatalf("anonymous /mcp = %d %q, want 401 naming %s", res.StatusCode, res.Header.Get("WWW-Authenticate"), metadata)
	}
	if c := res.Header.Get("WWW-Authenticate"); strings.Contains(c, "error=") {
		t.Errorf("anonymous /mcp challenge %q has an error code; without a token it has none (RFC 6750 §3.1)", c)
	}
	var prm struct {
		Resource             string   `json:"resource"`
		ResourceName         string   `json:"resource_name"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if r, err := http.Get(metadata); err != nil || json.NewDecoder(r.Body).Decode(&prm) != nil || prm.Resource != srv.URL+"/mcp" ||
		prm.ResourceName != "domaind MCP server" || !slices.Equal(prm.AuthorizationServers, []string{srv.URL}) {
		t.Fatalf("metadata = %+v, %v", prm, err)
	}

	session, tok := mcpSession(t, env, srv.URL)
	var bound models.OAuthToken
	if err := env.db.Take(&bound, "hash = ?", secret.Hash(tok.access)).Error; err != nil || bound.Resource != srv.URL+"/mcp" {
		t.Errorf("the token is bound to %q (%v), want the MCP server (RFC 8707)", bound.Resource, err)
	}
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("tool %s has no description or schemas", tool.Name)
		}
	}
	// The schemas say the tools' rules: 0 is out of range everywhere.
	for _, tool := range tools.Tools {
		raw, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Properties map[string]struct {
				Enum     []string `json:"enum"`
				Minimum  *float64 `json:"minimum"`
				Maximum  *float64 `json:"maximum"`
				MaxItems *int     `json:"maxItems"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		p := schema.Properties
		switch tool.Name {
		case "marketplace_listings":
			if l := p["limit"]; l.Minimum == nil || *l.Minimum != 1 || l.Maximum == nil || *l.Maximum != 200 || len(p["sort"].Enum) != 3 {
				t.Errorf("marketplace_listings' schema = %s, want limit 1 to 200 and the sorts", raw)
			}
		case "suggest_domains":
			if l := p["limit"]; l.Minimum == nil || *l.Minimum != 1 || p["tlds"].MaxItems == nil {
				t.Errorf("suggest_domains' schema = %s, want limit from 1 and at most so many TLDs", raw)
			}
		case "tld_pricing":
			if !slices.Equal(p["op"].Enum, []string{"register", "renew", "transfer", "restore"}) {
				t.Errorf("tld_pricing's schema = %s, want the operations", raw)
			}
		}
	}
	slices.Sort(names)
	if want := []string{"marketplace_listings", "search_domains", "suggest_domains", "tld_pricing", "tld_requirements", "whois_lookup"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}

	price, msg := call(t, session, "tld_pricing", map[string]any{"tld": ".COM", "op": "register"})
	var http1 struct {
		PriceCents int64 `json:"priceCents"`
	}
	if w := env.request("GET", "/api/pricing/tld?tld=com&op=register", ""); json.Unmarshal(w.Body.Bytes(), &http1) != nil ||
		price["tld"] != "com" || price["price_cents"] != float64(http1.PriceCents) || price["currency"] != "USD" {
		t.Errorf("tld_pricing = %v %q, want the HTTP API's %d cents", price, msg, http1.PriceCents)
	}
	rules, msg := call(t, session, "tld_requirements", map[string]any{"tld": "io"})
	if rules["tld"] != "io" || rules["rules"] == nil || rules["source"] != "sandbox" {
		t.Errorf("tld_requirements = %v %q", rules, msg)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"tld_pricing", map[string]any{"tld": "com", "op": "buy"}, "/properties/op: enum"}, // the schema's rule, checked by the SDK
		{"tld_pricing", map[string]any{"tld": "", "op": "register"}, "tld is required"},
		{"tld_pricing", map[string]any{"tld": "nosuchtld", "op": "register"}, "not a TLD we sell"},
		{"tld_requirements", map[string]any{"tld": "bad tld!"}, "tld "},
		{"whois_lookup", map[string]any{"domain": ""}, "domain is required"},
		{"whois_lookup", map[string]any{"domain": "not a domain"}, "domain "},
		{"marketplace_listings", map[string]any{"sort": "cheapest"}, "/properties/sort: enum"},
		{"suggest_domains", map[string]any{"keywords": ""}, "keywords is required"},
		{"suggest_domains", map[string]any{"keywords": "green", "tlds": []string{"not a tld"}}, "tlds[0]"},
		{"marketplace_listings", map[string]any{"limit": 500}, "limit"},
		{"marketplace_listings", map[string]any{"limit": 0}, "limit"},
		{"suggest_domains", map[string]any{"keywords": "green", "limit": 0}, "limit"},
		{"tld_pricing", map[string]any{"tld": "com", "op": "register", "extra": 1}, "extra"},
		{"marketplace_listings", map[string]any{"cursor": "forged"}, "cursor"},
	} {
		if out, msg := call(t, session, tc.tool, tc.args); out != nil || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %v = %v %q, want a tool error saying %q", tc.tool, tc.args, out, msg, tc.want)
		}
	}

	ideas, msg := call(t, session, "suggest_domains", map[string]any{"keywords": "green energy", "tlds": []string{"com", "io"}, "limit": 3})
	suggestions, _ := ideas["suggestions"].([]any)
	if len(suggestions) == 0 || len(suggestions) > 3 || ideas["checked"].(float64) < 1 {
		t.Errorf("suggest_domains = %v %q", ideas, msg)
	}
	for _, sg := range suggestions {
		d := sg.(map[string]any)["domain"].(string)
		if !strings.HasSuffix(d, ".com") && !strings.HasSuffix(d, ".io") || !strings.Contains(d, "green") && !strings.Contains(d, "energy") {
			t.Errorf("suggestion %q is not made of the keywords under the TLDs asked for", d)
		}
	}

	// The marketplace, with prices for pricing:read, and without them.
	cents := int64(250_000)
	for _, d := range []string{"sunnyflights.com", "sunnyflights.io", "rainydays.com"} {
		l := models.Listing{ID: models.NewID(), Domain: d, TLD: d[strings.IndexByte(d, '.')+1:], BINCents: &cents, Currency: "USD",
			Approved: true, MarketplaceVisible: true, CreatedAt: env.now}
		if err := env.db.Create(&l).Error; err != nil {
			t.Fatal(err)
		}
	}
	page, msg := call(t, session, "marketplace_listings", map[string]any{"q": "sunny", "limit": 1})
	items, _ := page["listings"].([]any)
	if len(items) != 1 || page["total"] != float64(2) || page["next_cursor"] == nil || items[0].(map[string]any)["bin_cents"] != float64(250_000) {
		t.Errorf("marketplace_listings = %v %q", page, msg)
	}
	next, msg := call(t, session, "marketplace_listings", map[string]any{"q": "sunny", "limit": 1, "cursor": page["next_cursor"]})
	if items2, _ := next["listings"].([]any); len(items2) != 1 || next["next_cursor"] != nil ||
		items2[0].(map[string]any)["domain"] == items[0].(map[string]any)["domain"] {
		t.Errorf("the next page = %v %q", next, msg)
	}
	// The consent grants pricing:read to every token it makes; a token
	// without it (a grant of no scope) is made here as the server stores one.
	scopeless := secret.New()
	row := bound
	row.Hash, row.Scope = secret.Hash(scopeless), ""
	if err := env.db.Create(&row).Error; err != nil {
		t.Fatal(err)
	}
	masked := bearerSession(t, srv.URL, scopeless)
	page, msg = call(t, masked, "marketplace_listings", map[string]any{"tld": "com"})
	if items, _ := page["listings"].([]any); len(items) != 2 || items[0].(map[string]any)["bin_cents"] != nil {
		t.Errorf("marketplace_listings without pricing:read = %v %q, want prices null", page, msg)
	}
	if out, msg := call(t, masked, "marketplace_listings", map[string]any{"max_dollars": 10}); out != nil || !strings.Contains(msg, "pricing:read") {
		t.Errorf("a price filter without pricing:read = %v %q", out, msg)
	}

	// Pricing and requirements share the HTTP API's 120 a minute, per user.
	// Three calls above spent units (bad input spends none).
	var limited string
	allowed := 0
	for ; allowed < 130; allowed++ {
		if _, limited = call(t, session, "tld_requirements", map[string]any{"tld": "com"}); limited != "" {
			break
		}
	}
	if allowed != 117 || !strings.Contains(limited, "rate limit reached: tld_requirements allows 120 calls a minute") {
		t.Errorf("after %d more calls: %q, want 117 and then the limit named", allowed, limited)
	}

	// An expired token is refused with the challenge, as a revoked one.
	expired := secret.New()
	row.Hash, row.Scope, row.ExpiresAt = secret.Hash(expired), "pricing:read", env.now.Add(-time.Second)
	if err := env.db.Create(&row).Error; err != nil {
		t.Fatal(err)
	}
	for _, token := range []string{expired, "not-a-token"} {
		if code, challenge := mcpPost(t, srv.URL, token); code != 401 || !strings.Contains(challenge, metadata) || !strings.Contains(challenge, "Bearer") ||
			!strings.Contains(challenge, `error="invalid_token"`) {
			t.Errorf("token %.12s… = %d %q, want 401 with the challenge saying invalid_token (RFC 6750 §3.1)", token, code, challenge)
		}
	}
	// A revoked token is refused with the challenge. Its client revokes it
	// (RFC 7009 §2.1), the one the SDK registered.
	form := url.Values{"token": {tok.access}, "client_id": {bound.ClientID}}
	if r, err := http.PostForm(srv.URL+"/api/oauth/revoke", form); err != nil || r.StatusCode != 200 {
		t.Fatalf("revoke = %v %v", r, err)
	}
	if code, challenge := mcpPost(t, srv.URL, tok.access); code != 401 || !strings.Contains(challenge, metadata) {
		t.Errorf("a revoked token = %d %q, want 401 with the challenge", code, challenge)
	}
}

// mcpPost sends tools/list with token and returns the status and the
// challenge.
func mcpPost(t *testing.T, base, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+mcpapi.Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header.Get("WWW-Authenticate")
}

// whois_lookup looks a name up as POST /api/tools/whois does (the queue,
// RDAP, the fallback), and says when nobody has the name.
func TestMCPWhoisLookup(t *testing.T) {
	t.Parallel()
	env, srv := servedEnv(t)
	startLookupWorker(t, env, newLookupWorld(t).resolver)
	session, _ := mcpSession(t, env, srv.URL)
	rec, msg := call(t, session, "whois_lookup", map[string]any{"domain": "WWW.Google.com"})
	if rec["domain"] != "google.com" || rec["registrar"] != "MarkMonitor Inc." || rec["raw_source"] != "RDAP" ||
		rec["expiration_date"] != "2028-09-14T04:00:00Z" || len(rec["nameservers"].([]any)) != 4 {
		t.Errorf("whois_lookup = %v %q", rec, msg)
	}
	if out, msg := call(t, session, "whois_lookup", map[string]any{"domain": "unregistered-name.com"}); out != nil ||
		!strings.Contains(msg, "neither RDAP nor the WHOIS fallback has data for unregistered-name.com") {
		t.Errorf("an unregistered name = %v %q", out, msg)
	}
}

// search_domains answers the rows of the search stream, the queried name
// first, with the HTTP API's states and prices; the 61st search in a
// minute is a tool error naming the limit (60 a minute, per user).
func TestMCPSearch(t *testing.T) {
	t.Parallel()
	env, srv := servedEnv(t)
	seedTLDs(t, env)
	session, _ := mcpSession(t, env, srv.URL)
	res, msg := call(t, session, "search_domains", map[string]any{"q": "Sunny-Yoga.com"})
	rows, _ := res["rows"].([]any)
	if len(rows) < 2 {
		t.Fatalf("search_domains = %v %q, want the name and the same label under the search TLDs", res, msg)
	}
	first := rows[0].(map[string]any)
	if first["domain"] != "sunny-yoga.com" || first["state"] == "" || first["state_label"] == "" || first["register_cents"] == nil {
		t.Errorf("the first row = %v", first)
	}
	for _, r := range rows[1:] {
		if d := r.(map[string]any)["domain"].(string); !strings.HasPrefix(d, "sunny-yoga.") || d == "sunny-yoga.com" {
			t.Errorf("row %q is not the label under another TLD", d)
		}
	}
	if out, msg := call(t, session, "search_domains", map[string]any{"q": "  "}); out != nil || !strings.Contains(msg, "q is required") {
		t.Errorf("an empty query = %v %q", out, msg)
	}
	if out, msg := call(t, session, "search_domains", map[string]any{"q": "bad..name"}); out != nil || msg == "" || strings.Contains(msg, "service failed") {
		t.Errorf("a malformed query = %v %q, want a tool error saying what is wrong", out, msg)
	}
	// The three searches above count (a search spends its unit first, as
	// POST /api/domain/search does); the 61st is refused.
	var limited string
	calls := 3
	for limited == "" && calls < 70 {
		calls++
		_, limited = call(t, session, "search_domains", map[string]any{"q": "sunny-yoga.io"})
	}
	// The test clock stands still: the first unit frees a whole minute later.
	if calls != 61 || limited != "rate limit reached: search_domains allows 60 calls a minute; try again in 60 s" {
		t.Errorf("search %d = %q, want the 61st refused naming the limit", calls, limited)
	}
}

// A token that cannot be checked (the database failing) is a 500 with
// nothing internal in its body, as everywhere else.
func TestMCPHidesWhyATokenCouldNotBeChecked(t *testing.T) {
	t.Parallel()
	env, srv := servedEnv(t)
	_, tok := mcpSession(t, env, srv.URL)
	modelstest.FailReads(t, env.db, "oauth_tokens", errors.New("sql: database is closed"))
	res := listTools(t, srv.URL, tok.access, "application/json")
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 500 || strings.Contains(string(body), "sql") || !strings.Contains(string(body), `"internal_error"`) {
		t.Errorf("a token that could not be checked = %d %s, want 500 internal_error saying nothing internal", res.StatusCode, body)
	}
}

// listTools posts a tools/list to base's MCP server with the access
// token, its body typed contentType.
func listTools(t *testing.T, base, access, contentType string) *http.Response {
	t.Helper()
	r, _ := http.NewRequest("POST", base+mcpapi.Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	r.Header.Set("Content-Type", contentType)
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer "+access)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A body the MCP server does not read (not JSON) is 415 in the service's
// error shape, as the OpenAPI document says (the checked handler holds the
// answer to it).
func TestMCPRefusesABodyOfAnotherType(t *testing.T) {
	t.Parallel()
	env, srv := servedEnv(t)
	_, tok := mcpSession(t, env, srv.URL)
	res := listTools(t, srv.URL, tok.access, "text/plain")
	defer res.Body.Close()
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != 415 || body.Error.Code != "unsupported_media_type" {
		t.Errorf("a text/plain body = %d %+v (%v), want 415 unsupported_media_type", res.StatusCode, body, err)
	}
}
