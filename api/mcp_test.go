package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	mcpapi "github.com/domaind/domaind/api/mcp"
	"github.com/domaind/domaind/models"
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

// call calls a tool and returns its structured answer, or its error text.
func call(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) (map[string]any, string) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
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
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if r, err := http.Get(metadata); err != nil || json.NewDecoder(r.Body).Decode(&prm) != nil || prm.Resource != srv.URL+"/mcp" ||
		!slices.Equal(prm.AuthorizationServers, []string{srv.URL}) {
		t.Fatalf("metadata = %+v, %v", prm, err)
	}

	session, tok := mcpSession(t, env, srv.URL)
	var bound models.OAuthToken
	if err := env.db.Take(&bound, "client_id IN (SELECT client_id FROM o_auth_clients WHERE client_name = ?)", "Price Watcher").Error; err == nil &&
		bound.Resource != srv.URL+"/mcp" {
		t.Errorf("the token is bound to %q, want the MCP server (RFC 8707)", bound.Resource)
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
	slices.Sort(names)
	if want := []string{"tld_pricing", "tld_requirements", "whois_lookup"}; !slices.Equal(names, want) {
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
		{"tld_pricing", map[string]any{"tld": "com", "op": "buy"}, "op must be one of"},
		{"tld_pricing", map[string]any{"tld": "", "op": "register"}, "tld is required"},
		{"tld_pricing", map[string]any{"tld": "nosuchtld", "op": "register"}, "not a TLD we sell"},
		{"tld_requirements", map[string]any{"tld": "bad tld!"}, "tld "},
		{"whois_lookup", map[string]any{"domain": ""}, "domain is required"},
		{"whois_lookup", map[string]any{"domain": "not a domain"}, "domain "},
	} {
		if out, msg := call(t, session, tc.tool, tc.args); out != nil || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %v = %v %q, want a tool error saying %q", tc.tool, tc.args, out, msg, tc.want)
		}
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

	// A revoked token is refused with the challenge.
	form := url.Values{"token": {tok.access}}
	if r, err := http.PostForm(srv.URL+"/api/oauth/revoke", form); err != nil || r.StatusCode != 200 {
		t.Fatalf("revoke = %v %v", r, err)
	}
	req, _ := http.NewRequest("POST", srv.URL+mcpapi.Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+tok.access)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != 401 || !strings.Contains(r.Header.Get("WWW-Authenticate"), metadata) {
		t.Errorf("a revoked token = %v %v, want 401 with the challenge", r, err)
	}
}

// whois_lookup looks a name up as POST /api/tools/whois does (the queue,
// RDAP, the fallback), and says when nobody has the name.
func TestMCPWhoisLookup(t *testing.T) {
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
