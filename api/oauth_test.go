package api

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
)

// oauthClient is a client registered against a test server, driven with
// golang.org/x/oauth2 as a real client would be.
type oauthClient struct {
	conf     *oauth2.Config
	redirect string
}

func registerClient(t *testing.T, b *browser, redirect string) oauthClient {
	t.Helper()
	res, body := b.json("POST", "/api/oauth/register", `{"client_name":"Price Watcher","redirect_uris":["`+redirect+`"]}`)
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if res.StatusCode != 201 || json.Unmarshal([]byte(body), &reg) != nil || reg.ClientID == "" || strings.Contains(body, "secret") {
		t.Fatalf("register = %d %s", res.StatusCode, body)
	}
	return oauthClient{redirect: redirect, conf: &oauth2.Config{
		ClientID:    reg.ClientID,
		RedirectURL: redirect,
		Scopes:      []string{"pricing:read"},
		Endpoint: oauth2.Endpoint{
			AuthURL: b.base + "/oauth/authorize", TokenURL: b.base + "/api/oauth/token", AuthStyle: oauth2.AuthStyleInParams,
		},
	}}
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// consent follows an authorization URL in a signed-in browser to its
// consent page and answers it; it returns where the server redirected
// (with 303, checked).
func consent(t *testing.T, b *browser, authURL, decision string) *url.URL {
	t.Helper()
	u, _ := url.Parse(authURL)
	res, body := b.do("GET", u.RequestURI(), "", "")
	if res.StatusCode != 200 || !strings.Contains(body, "Price Watcher") || !strings.Contains(body, "marketplace buy-now and floor prices") {
		t.Fatalf("consent page = %d %s", res.StatusCode, body)
	}
	if res.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("consent page X-Frame-Options = %q, want DENY (no clickjacking)", res.Header.Get("X-Frame-Options"))
	}
	form := url.Values{"decision": {decision}}
	for _, m := range hiddenInput.FindAllStringSubmatch(body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	res, body = b.form("/oauth/authorize", form)
	if res.StatusCode != http.StatusSeeOther {
		// RFC 9700 §4.12: after a POST only 303 makes the browser GET the
		// redirect URI; a 307 would post the form, the session's CSRF
		// token with it, to the client, and 302 lets a browser do so.
		t.Fatalf("consent answer = %d %s, want 303 See Other", res.StatusCode, body)
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// authorize runs the browser part of the flow and returns the code.
func authorize(t *testing.T, b *browser, c oauthClient, state, verifier string) string {
	t.Helper()
	loc := consent(t, b, c.conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)), "approve")
	q := loc.Query()
	if !strings.HasPrefix(loc.String(), c.redirect+"?") || q.Get("state") != state || q.Get("code") == "" {
		t.Fatalf("redirect = %s, want %s with the code and state %q", loc, c.redirect, state)
	}
	return q.Get("code")
}

// grant runs the whole flow for c in a signed-in browser and returns its tokens.
func grant(t *testing.T, b *browser, c oauthClient, state string) *oauth2.Token {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	tok, err := c.conf.Exchange(context.Background(), authorize(t, b, c, state, verifier), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// bearerGet calls path with an access token.
func bearerGet(b *browser, path, token string) (*http.Response, string) {
	return b.do("GET", path, "", "", "Authorization", "Bearer "+token)
}

func TestOAuthAuthorizationCodeFlowWithPKCE(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	b := newBrowser(t, env)
	c := registerClient(t, b, "http://127.0.0.1:7777/callback")
	ctx := context.Background()

	// Signed out: to the sign-in page and back to the authorization request.
	state, verifier := "st-1", oauth2.GenerateVerifier()
	authURL := c.conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))
	u, _ := url.Parse(authURL)
	res, _ := b.do("GET", u.RequestURI(), "", "")
	next, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != 303 || next.Path != "/login" || next.Query().Get("next") != u.RequestURI() {
		t.Fatalf("signed-out authorize = %d to %q, want /login with next = the request", res.StatusCode, res.Header.Get("Location"))
	}
	newBrowser(t, env).signUp("owner@example.com", "owner-password")
	tok := b.formToken(next.RequestURI())
	res, _ = b.form("/login", url.Values{"email": {"owner@example.com"}, "password": {"owner-password"}, "csrf_token": {tok}, "next": {next.Query().Get("next")}})
	if res.StatusCode != 303 || res.Header.Get("Location") != u.RequestURI() {
		t.Fatalf("sign-in = %d to %q, want back to the authorization request", res.StatusCode, res.Header.Get("Location"))
	}
	code := authorize(t, b, c, state, verifier)

	t1, err := c.conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if t1.TokenType != "Bearer" || t1.RefreshToken == "" || t1.Extra("scope") != "pricing:read" || t1.ExpiresIn != 1800 {
		t.Fatalf("token = %+v scope %v", t1, t1.Extra("scope"))
	}
	var stored models.OAuthToken
	if env.db.Take(&stored, "hash = ?", t1.AccessToken).Error == nil {
		t.Fatal("the access token is stored as itself, not hashed")
	}

	if res, body := bearerGet(b, "/api", t1.AccessToken); res.StatusCode != 200 || !strings.Contains(body, "pricing:read") {
		t.Errorf("GET /api with the token = %d %s", res.StatusCode, body)
	}
	// The token unmasks marketplace prices in the search stream.
	bin := int64(125000)
	env.db.Create(&models.Listing{ID: models.NewID(), Domain: "pricey.com", TLD: "com", BINCents: &bin, Currency: "USD", Approved: true, MarketplaceVisible: true})
	search := func(token string) string {
		h := []string{}
		if token != "" {
			h = []string{"Authorization", "Bearer " + token}
		}
		_, body := b.do("POST", "/api/domain/search", "application/json", `{"q":"pricey.com"}`, h...)
		return body
	}
	if body := search(t1.AccessToken); !strings.Contains(body, `"bin":1250.00`) {
		t.Errorf("search with pricing:read shows no buy-now price:\n%s", body)
	}
	if body := search(""); !strings.Contains(body, `"bin":null`) || strings.Contains(body, "1250") {
		t.Errorf("search without a token shows the buy-now price:\n%s", body)
	}

	// A code is single use: a second exchange fails and revokes what the first gave.
	if _, err := c.conf.Exchange(ctx, code, oauth2.VerifierOption(verifier)); !isOAuthError(err, "invalid_grant") {
		t.Errorf("second exchange of a code = %v, want invalid_grant", err)
	}
	res, _ = bearerGet(b, "/api", t1.AccessToken)
	if res.StatusCode != 401 || !strings.Contains(res.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("token of a reused code = %d %q, want 401 invalid_token", res.StatusCode, res.Header.Get("WWW-Authenticate"))
	}
	if body := search(t1.AccessToken); !strings.Contains(body, "invalid_token") {
		t.Errorf("search with a revoked token = %s, want 401 invalid_token rather than masked data", body)
	}
}

func isOAuthError(err error, code string) bool {
	var re *oauth2.RetrieveError
	if !asRetrieveError(err, &re) {
		return false
	}
	return re.ErrorCode == code
}

func asRetrieveError(err error, target **oauth2.RetrieveError) bool {
	re, ok := err.(*oauth2.RetrieveError)
	if ok {
		*target = re
	}
	return ok
}

// signedInBrowser is a browser with a fresh account, signed in.
func signedInBrowser(t *testing.T, env *testEnv, email string) *browser {
	t.Helper()
	b := newBrowser(t, env)
	b.signUp(email, "long-enough-pw")
	return b
}

func TestOAuthCodeExchangeRefusals(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := signedInBrowser(t, env, "user@example.com")
	c := registerClient(t, b, "https://app.example/cb")
	other := registerClient(t, b, "https://other.example/cb")
	ctx := context.Background()

	verifier := oauth2.GenerateVerifier()
	code := authorize(t, b, c, "s", verifier)
	if _, err := c.conf.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier())); !isOAuthError(err, "invalid_grant") {
		t.Errorf("wrong verifier = %v, want invalid_grant", err)
	}
	wrongRedirect := *c.conf
	wrongRedirect.RedirectURL = "https://app.example/other"
	if _, err := wrongRedirect.Exchange(ctx, code, oauth2.VerifierOption(verifier)); !isOAuthError(err, "invalid_grant") {
		t.Errorf("wrong redirect_uri = %v, want invalid_grant", err)
	}
	otherClient := *c.conf
	otherClient.ClientID = other.conf.ClientID
	if _, err := otherClient.Exchange(ctx, code, oauth2.VerifierOption(verifier)); !isOAuthError(err, "invalid_grant") {
		t.Errorf("another client = %v, want invalid_grant", err)
	}
	unknown := *c.conf
	unknown.ClientID = "oc_unknown"
	if _, err := unknown.Exchange(ctx, code, oauth2.VerifierOption(verifier)); !isOAuthError(err, "invalid_client") {
		t.Errorf("unknown client = %v, want invalid_client", err)
	}
	if _, err := c.conf.Exchange(ctx, code, oauth2.VerifierOption(verifier)); err != nil {
		t.Errorf("the code after refused attempts = %v; the refusals must not spend it", err)
	}

	expiring := authorize(t, b, c, "s2", verifier)
	env.now = env.now.Add(61 * time.Second)
	if _, err := c.conf.Exchange(ctx, expiring, oauth2.VerifierOption(verifier)); !isOAuthError(err, "invalid_grant") {
		t.Errorf("code after 61 s = %v, want invalid_grant", err)
	}
}

// postToken sends a form to the token endpoint and decodes the answer.
func postToken(t *testing.T, b *browser, form url.Values) (int, map[string]any) {
	t.Helper()
	res, body := b.form("/api/oauth/token", form)
	var out map[string]any
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("token answer %d %s: %v", res.StatusCode, body, err)
	}
	if res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("token answer without Cache-Control: no-store")
	}
	return res.StatusCode, out
}

func TestOAuthRefreshRotationAndReuseDetection(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := signedInBrowser(t, env, "user@example.com")
	c := registerClient(t, b, "https://app.example/cb")
	first := grant(t, b, c, "s")
	refresh := func(rt string, extra ...string) (int, map[string]any) {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {c.conf.ClientID}}
		for i := 0; i+1 < len(extra); i += 2 {
			form.Set(extra[i], extra[i+1])
		}
		return postToken(t, b, form)
	}
	status, second := refresh(first.RefreshToken)
	if status != 200 || second["refresh_token"] == first.RefreshToken || second["access_token"] == first.AccessToken || second["scope"] != "pricing:read" {
		t.Fatalf("refresh = %d %v, want new tokens", status, second)
	}
	if status, out := refresh(first.RefreshToken); status != 400 || out["error"] != "invalid_grant" {
		t.Errorf("reuse of a rotated refresh token = %d %v, want invalid_grant", status, out)
	}
	// Reuse revokes the whole family: the tokens of the rotation too.
	if res, _ := bearerGet(b, "/api", second["access_token"].(string)); res.StatusCode != 401 {
		t.Errorf("access token of a family after reuse = %d, want 401", res.StatusCode)
	}
	if status, out := refresh(second["refresh_token"].(string)); status != 400 || out["error"] != "invalid_grant" {
		t.Errorf("refresh token of a revoked family = %d %v, want invalid_grant", status, out)
	}

	// A fresh grant: scope can only narrow, and a 30-day-old refresh token is dead.
	fresh := grant(t, b, c, "s2")
	if status, out := refresh(fresh.RefreshToken, "scope", "admin"); status != 400 || out["error"] != "invalid_scope" {
		t.Errorf("refresh widening the scope = %d %v, want invalid_scope", status, out)
	}
	env.now = env.now.Add(30*24*time.Hour + time.Second)
	if status, out := refresh(fresh.RefreshToken); status != 400 || out["error"] != "invalid_grant" {
		t.Errorf("expired refresh token = %d %v, want invalid_grant", status, out)
	}
}

func TestOAuthTokenEndpointRefusesMalformedRequests(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := newBrowser(t, env)
	c := registerClient(t, b, "https://app.example/cb")
	tests := []struct {
		name string
		form url.Values
		want int
		code string
	}{
		{"no grant type", url.Values{"client_id": {c.conf.ClientID}}, 400, "invalid_request"},
		{"password grant", url.Values{"grant_type": {"password"}, "username": {"a"}}, 400, "unsupported_grant_type"},
		{"implicit-era grant", url.Values{"grant_type": {"client_credentials"}}, 400, "unsupported_grant_type"},
		{"code without verifier", url.Values{"grant_type": {"authorization_code"}, "code": {"ac_x"}, "redirect_uri": {c.redirect}, "client_id": {c.conf.ClientID}}, 400, "invalid_request"},
		{"unknown code", url.Values{"grant_type": {"authorization_code"}, "code": {"ac_x"}, "redirect_uri": {c.redirect}, "client_id": {c.conf.ClientID}, "code_verifier": {oauth2.GenerateVerifier()}}, 400, "invalid_grant"},
		{"no client", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt_x"}}, 400, "invalid_request"},
		{"unknown refresh token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt_x"}, "client_id": {c.conf.ClientID}}, 400, "invalid_grant"},
	}
	for _, tc := range tests {
		if status, out := postToken(t, b, tc.form); status != tc.want || out["error"] != tc.code || out["error_description"] == "" {
			t.Errorf("%s = %d %v, want %d %s", tc.name, status, out, tc.want, tc.code)
		}
	}
	// HTTP Basic, as golang.org/x/oauth2 sends the client: taken for a
	// public client (the client_id as the user, no password).
	for _, tc := range []struct {
		name, user, pass string
		want             int
		code             string
	}{
		{"Basic with the client", c.conf.ClientID, "", 400, "invalid_grant"}, // past the client: the refresh token is unknown
		{"Basic with a secret", c.conf.ClientID, "s3cret", 401, "invalid_client"},
		{"Basic with an unknown client", "oc_nobody", "", 401, "invalid_client"},
		{"Basic with a NUL in the client", "oc_\x00", "", 401, "invalid_client"}, // Postgres's text holds no NUL
	} {
		req, _ := http.NewRequest("POST", "/api/oauth/token", strings.NewReader(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt_x"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(url.QueryEscape(tc.user), tc.pass)
		w := env.do(req)
		var out map[string]any
		json.Unmarshal(w.Body.Bytes(), &out)
		if w.Code != tc.want || out["error"] != tc.code {
			t.Errorf("%s = %d %s, want %d %s", tc.name, w.Code, w.Body, tc.want, tc.code)
		}
		if tc.want == 401 && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic") {
			t.Errorf("%s: WWW-Authenticate = %q, want a Basic challenge (RFC 6749 §5.2)", tc.name, w.Header().Get("WWW-Authenticate"))
		}
	}
	res, body := b.json("POST", "/api/oauth/token", `{"grant_type":"authorization_code"}`)
	if res.StatusCode != 400 || !strings.Contains(body, `"invalid_request"`) {
		t.Errorf("JSON token request = %d %s, want 400 invalid_request", res.StatusCode, body)
	}
	// Media types compare without case (RFC 9110 §8.3.1).
	form := httptest.NewRequest("POST", "/api/oauth/token", strings.NewReader(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt_x"}, "client_id": {c.conf.ClientID}}.Encode()))
	form.Header.Set("Content-Type", "Application/X-WWW-Form-Urlencoded")
	if w := env.do(form); w.Code != 400 || !strings.Contains(w.Body.String(), `"invalid_grant"`) {
		t.Errorf("a form typed in capitals = %d %s, want it read (400 invalid_grant for its unknown token)", w.Code, w.Body)
	}
}

func TestOAuthAuthorizeRefusals(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := signedInBrowser(t, env, "user@example.com")
	c := registerClient(t, b, "https://app.example/cb")
	challenge := oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())
	good := url.Values{"response_type": {"code"}, "client_id": {c.conf.ClientID}, "redirect_uri": {c.redirect},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"xyz"}, "scope": {"pricing:read"}}
	with := func(k, v string) url.Values {
		q := url.Values{}
		for key, vals := range good {
			q[key] = vals
		}
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
		return q
	}

	// Before the person has answered the consent page, every error is
	// shown on our page and nothing is sent to the redirect URI, signed in
	// or not: registration is open, so a registered URI proves nothing
	// (RFC 9700 §4.11.2).
	anonymous := newBrowser(t, env)
	for name, q := range map[string]url.Values{
		"unknown client":          with("client_id", "oc_nobody"),
		"no client":               with("client_id", ""),
		"other redirect_uri":      with("redirect_uri", "https://evil.example/cb"),
		"redirect_uri with extra": with("redirect_uri", c.redirect+"/x"),
		"no redirect_uri":         with("redirect_uri", ""),
		"implicit flow":           with("response_type", "token"),
		"bad response type":       with("response_type", "x"),
		"no PKCE":                 with("code_challenge", ""),
		"plain PKCE":              with("code_challenge_method", "plain"),
		"no challenge method":     with("code_challenge_method", ""),
		"short challenge":         with("code_challenge", "abc"),
	} {
		for who, br := range map[string]*browser{"signed in": b, "signed out": anonymous} {
			res, body := br.do("GET", "/oauth/authorize?"+q.Encode(), "", "")
			if res.StatusCode != 400 || res.Header.Get("Location") != "" || !strings.Contains(body, "does not work") {
				t.Errorf("%s, %s = %d to %q, want a 400 page and no redirect", name, who, res.StatusCode, res.Header.Get("Location"))
			}
		}
	}

	// What a verified client asked for and may not have goes back to it,
	// through the person: a link on the page, never an automatic redirect.
	for name, tc := range map[string]struct {
		q    url.Values
		code string
	}{
		"unknown scope":    {with("scope", "pricing:read admin"), "invalid_scope"},
		"unknown resource": {with("resource", "https://elsewhere.example/api"), "invalid_target"},
	} {
		res, body := b.do("GET", "/oauth/authorize?"+tc.q.Encode(), "", "")
		m := regexp.MustCompile(`id="return" href="([^"]+)"`).FindStringSubmatch(body)
		if res.StatusCode != 400 || res.Header.Get("Location") != "" || m == nil {
			t.Errorf("%s = %d to %q, want a 400 page with a link back", name, res.StatusCode, res.Header.Get("Location"))
			continue
		}
		back, err := url.Parse(html.UnescapeString(m[1]))
		if err != nil || !strings.HasPrefix(back.String(), c.redirect+"?") || back.Query().Get("error") != tc.code ||
			back.Query().Get("state") != "xyz" || back.Query().Get("iss") != env.srv.base() || back.Query().Get("code") != "" {
			t.Errorf("%s: the link back is %s, want %s with error=%s, the state and the issuer", name, back, c.redirect, tc.code)
		}
	}

	// No state: PKCE protects the flow (OAuth 2.1), and clients that send
	// none are served.
	if loc := consent(t, b, b.base+"/oauth/authorize?"+with("state", "").Encode(), "approve"); loc.Query().Get("code") == "" || loc.Query().Has("state") {
		t.Errorf("authorization without a state = %s, want a code and no state", loc)
	}

	// Deny, a consent without the CSRF token, and no scope (all scopes).
	loc := consent(t, b, b.base+"/oauth/authorize?"+good.Encode(), "deny")
	if loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "xyz" || loc.Query().Get("code") != "" {
		t.Errorf("deny redirected to %s, want error=access_denied&state=xyz", loc)
	}
	forged := with("decision", "approve")
	forged.Set("csrf_token", "forged")
	if res, _ := b.form("/oauth/authorize", forged); res.StatusCode != 403 {
		t.Errorf("consent with a forged CSRF token = %d, want 403", res.StatusCode)
	}
	loc = consent(t, b, b.base+"/oauth/authorize?"+with("scope", "").Encode(), "approve")
	if loc.Query().Get("code") == "" {
		t.Errorf("authorization without a scope = %s, want a code (for pricing:read)", loc)
	}
}

// A person who is not signed in signs in and comes back to the
// authorization request, even the longest a client may send (a redirect
// URI and a state at their limits, every byte percent-encoded): from the
// request itself (GET), and from the consent form when the session ended
// before it was answered (POST), without the form's CSRF token.
func TestOAuthSignInKeepsTheLongestRequest(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := newBrowser(t, env)
	const prefix = "https://app.example/cb/"
	c := registerClient(t, b, prefix+strings.Repeat(":", 2000-len(prefix)))
	state := strings.Repeat("é", 500/len("é"))
	authURL, _ := url.Parse(c.conf.AuthCodeURL(state, oauth2.S256ChallengeOption(oauth2.GenerateVerifier()),
		oauth2.SetAuthURLParam("resource", "http://api.test/api")))
	want := authURL.RequestURI()
	if len(want) < 3*(2000+500) {
		t.Fatalf("the request is %d bytes long, not at the limits", len(want))
	}
	// signIn signs in on the page /login?next= leads to, and checks that
	// the page, its form and its sign-up link carry want intact, and that
	// the sign-in leads back to it.
	signIn := func(how string, res *http.Response) {
		t.Helper()
		login, _ := url.Parse(res.Header.Get("Location"))
		if res.StatusCode != 303 || login.Path != "/login" || login.Query().Get("next") != want {
			t.Fatalf("%s signed out = %d to %.200q, want /login with next = the request", how, res.StatusCode, res.Header.Get("Location"))
		}
		res, body := b.do("GET", login.RequestURI(), "", "")
		form := url.Values{"email": {"long@example.com"}, "password": {"long-enough-pw"}}
		for _, m := range hiddenInput.FindAllStringSubmatch(body, -1) {
			form.Set(m[1], html.UnescapeString(m[2]))
		}
		if res.StatusCode != 200 || form.Get("next") != want {
			t.Fatalf("%s: the sign-in page = %d with next = %.200q, want the request", how, res.StatusCode, form.Get("next"))
		}
		if m := regexp.MustCompile(`href="(/signup\?[^"]+)"`).FindStringSubmatch(body); m == nil {
			t.Errorf("%s: the sign-in page has no link to sign up with next", how)
		} else if signUp, err := url.Parse(html.UnescapeString(m[1])); err != nil || signUp.Query().Get("next") != want {
			t.Errorf("%s: the sign-in page's link to sign up loses the request: %.200s", how, m[1])
		}
		res, _ = b.form("/login", form)
		if res.StatusCode != 303 || res.Header.Get("Location") != want {
			t.Fatalf("%s: sign-in = %d to %.200q, want back to the request", how, res.StatusCode, res.Header.Get("Location"))
		}
	}

	res, _ := b.do("GET", want, "", "")
	newBrowser(t, env).signUp("long@example.com", "long-enough-pw")
	signIn("GET", res)
	res, body := b.do("GET", want, "", "")
	consentForm := url.Values{"decision": {"approve"}}
	for _, m := range hiddenInput.FindAllStringSubmatch(body, -1) {
		consentForm.Set(m[1], html.UnescapeString(m[2]))
	}
	if res.StatusCode != 200 || consentForm.Get("state") != state || consentForm.Get("redirect_uri") != c.redirect {
		t.Fatalf("consent page = %d, want it with the state and redirect_uri intact", res.StatusCode)
	}

	// The session ends before the consent form is answered.
	if res, _ := b.form("/logout", url.Values{"csrf_token": {consentForm.Get("csrf_token")}}); res.StatusCode != 303 {
		t.Fatalf("sign-out = %d", res.StatusCode)
	}
	res, _ = b.form("/oauth/authorize", consentForm)
	signIn("POST", res)
	loc := consent(t, b, b.base+want, "approve")
	if !strings.HasPrefix(loc.String(), c.redirect+"?") || loc.Query().Get("code") == "" || loc.Query().Get("state") != state {
		t.Errorf("consent after signing in again = %.200s, want the redirect URI with a code and the state", loc)
	}

	// A scope may repeat its one value without end: it comes back as
	// granted, and fits.
	repeated := authURL.Query()
	repeated.Set("scope", strings.Repeat("pricing:read ", 1000))
	res, _ = newBrowser(t, env).do("GET", "/oauth/authorize?"+repeated.Encode(), "", "")
	login, _ := url.Parse(res.Header.Get("Location"))
	next, _ := url.Parse(login.Query().Get("next"))
	if res.StatusCode != 303 || next.Query().Get("scope") != "pricing:read" || safeNext(next.String()) != next.String() {
		t.Errorf("a repeated scope signed out = %d to next %.300q, want the request with scope=pricing:read", res.StatusCode, next)
	}
}

func TestOAuthRegistration(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for _, tc := range []struct {
		name, body string
		want       int
		code       string
	}{
		{"https", `{"client_name":"a","redirect_uris":["https://app.example/cb"]}`, 201, ""},
		{"loopback http", `{"redirect_uris":["http://127.0.0.1:8400/cb","http://[::1]/cb","http://localhost:3000/cb"]}`, 201, ""},
		{"http elsewhere", `{"redirect_uris":["http://app.example/cb"]}`, 400, "invalid_redirect_uri"},
		{"no redirect", `{"client_name":"a","redirect_uris":[]}`, 400, "invalid_redirect_uri"},
		{"fragment", `{"redirect_uris":["https://app.example/cb#x"]}`, 400, "invalid_redirect_uri"},
		{"relative", `{"redirect_uris":["/cb"]}`, 400, "invalid_redirect_uri"},
		{"custom scheme", `{"redirect_uris":["javascript:alert(1)"]}`, 400, "invalid_redirect_uri"},
		{"confidential", `{"redirect_uris":["https://app.example/cb"],"token_endpoint_auth_method":"client_secret_basic"}`, 400, "invalid_client_metadata"},
		{"not JSON", `redirect_uris=x`, 400, "invalid_client_metadata"},
		{"wrong type", `{"redirect_uris":"https://app.example/cb"}`, 400, "invalid_client_metadata"},
		{"too large", `{"client_name":"` + strings.Repeat("a", 2<<20) + `"}`, 413, "payload_too_large"}, // refused by the middleware, in the OAuth shape
	} {
		w := env.request("POST", "/api/oauth/register", tc.body)
		var out map[string]any
		json.Unmarshal(w.Body.Bytes(), &out)
		if w.Code != tc.want || (tc.code != "" && (out["error"] != tc.code || out["error_description"] == "")) || (tc.code == "" && out["client_id"] == nil) {
			t.Errorf("%s = %d %s, want %d %s", tc.name, w.Code, w.Body, tc.want, tc.code)
		}
	}
}

func TestOAuthDiscoveryAndChallenge(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	w := env.request("GET", "/.well-known/oauth-authorization-server", "")
	var as map[string]any
	json.Unmarshal(w.Body.Bytes(), &as)
	if w.Code != 200 || as["issuer"] != "http://api.test" || as["token_endpoint"] != "http://api.test/api/oauth/token" ||
		as["authorization_endpoint"] != "http://api.test/oauth/authorize" || as["registration_endpoint"] != "http://api.test/api/oauth/register" ||
		as["revocation_endpoint"] != "http://api.test/api/oauth/revoke" ||
		!strings.Contains(w.Body.String(), `"code_challenge_methods_supported":["S256"]`) ||
		!strings.Contains(w.Body.String(), `"token_endpoint_auth_methods_supported":["none"]`) ||
		!strings.Contains(w.Body.String(), `"grant_types_supported":["authorization_code","refresh_token"]`) ||
		!strings.Contains(w.Body.String(), `"response_types_supported":["code"]`) ||
		!strings.Contains(w.Body.String(), `"scopes_supported":["pricing:read"]`) {
		t.Errorf("authorization server metadata = %d %s", w.Code, w.Body)
	}
	if as["authorization_response_iss_parameter_supported"] != true {
		t.Errorf("metadata does not announce iss in authorization responses (RFC 9207): %s", w.Body)
	}
	// RFC 9728 §3.1, §3.3: each resource's metadata lives at the
	// well-known path with the resource's path appended, and names
	// exactly that resource.
	for path, resource := range map[string]string{
		"/.well-known/oauth-protected-resource":     "http://api.test",
		"/.well-known/oauth-protected-resource/api": "http://api.test/api",
	} {
		w = env.request("GET", path, "")
		var prm map[string]any
		json.Unmarshal(w.Body.Bytes(), &prm)
		if w.Code != 200 || prm["resource"] != resource || !strings.Contains(w.Body.String(), `"authorization_servers":["http://api.test"]`) {
			t.Errorf("%s = %d %s, want resource %s", path, w.Code, w.Body, resource)
		}
	}
	w = env.request("GET", "/api", "")
	if w.Code != 401 || w.Header().Get("WWW-Authenticate") != `Bearer resource_metadata="http://api.test/.well-known/oauth-protected-resource/api"` {
		t.Errorf("GET /api without a token = %d %q, want the challenge naming the API's own metadata", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	w = env.request("GET", "/api", "", "Authorization", "Bearer at_forged")
	if w.Code != 401 || !strings.Contains(w.Header().Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("GET /api with a forged token = %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}

// RFC 9207: the authorization response names the issuer; RFC 8707: a
// token is bound to the resource it was asked for, and is no good at
// another.
func TestOAuthIssuerAndResourceIndicators(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := signedInBrowser(t, env, "res@example.com")
	c := registerClient(t, b, "https://app.example/cb")
	verifier := oauth2.GenerateVerifier()
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", "http://api.test/api")}
	loc := consent(t, b, c.conf.AuthCodeURL("st", opts...), "approve")
	if loc.Query().Get("iss") != "http://api.test" {
		t.Errorf("authorization response %s lacks iss=http://api.test", loc)
	}
	ctx := context.Background()
	if _, err := c.conf.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", "https://evil.example/")); err == nil || !strings.Contains(err.Error(), "invalid_target") {
		t.Errorf("exchange for another resource = %v, want invalid_target", err)
	}
	loc = consent(t, b, c.conf.AuthCodeURL("st", opts...), "approve")
	tok, err := c.conf.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := bearerGet(b, "/api", tok.AccessToken); res.StatusCode != 200 {
		t.Fatalf("a token for the API at /api = %d, want 200", res.StatusCode)
	}
	var row models.OAuthToken
	if err := env.db.Take(&row, "hash = ?", secret.Hash(tok.AccessToken)).Error; err != nil || row.Resource != "http://api.test/api" {
		t.Fatalf("stored token resource = %q, %v; want the API", row.Resource, err)
	}
	// A token bound to a resource this API is not (issued for another one).
	env.db.Model(&models.OAuthToken{}).Where("hash = ?", row.Hash).Update("resource", "http://api.test/mcp")
	res, _ := bearerGet(b, "/api", tok.AccessToken)
	if res.StatusCode != 401 || !strings.Contains(res.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("a token for another resource at /api = %d %q, want 401 invalid_token", res.StatusCode, res.Header.Get("WWW-Authenticate"))
	}
	// Unknown resources are refused at the authorization request, on our page.
	bad := c.conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", "https://evil.example/"))
	if res, body := b.do("GET", strings.TrimPrefix(bad, b.base), "", ""); res.StatusCode != 400 || !strings.Contains(body, "invalid_target") {
		t.Errorf("authorize for an unknown resource = %d, want our error page with invalid_target", res.StatusCode)
	}
	// RFC 6749 §5.2: 401 invalid_client carries WWW-Authenticate.
	res, _ = b.form("/api/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {"oc_nobody"}})
	if res.StatusCode != 401 || res.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("invalid_client = %d with WWW-Authenticate %q", res.StatusCode, res.Header.Get("WWW-Authenticate"))
	}
}

func TestOAuthRevocation(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := signedInBrowser(t, env, "user@example.com")
	c := registerClient(t, b, "https://app.example/cb")
	other := registerClient(t, b, "https://other.example/cb")
	tok, otherTok := grant(t, b, c, "s"), grant(t, b, other, "s")
	// revoke asks to revoke token, naming the client in the form
	// (client_id) or by HTTP Basic (user name and password, when user is
	// not "", as at the token endpoint), and returns the answer.
	revoke := func(token, clientID, user, pass string) (int, string, http.Header) {
		t.Helper()
		form := url.Values{"token": {token}}
		if clientID != "" {
			form.Set("client_id", clientID)
		}
		req := httptest.NewRequest("POST", "/api/oauth/revoke", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if user != "" {
			req.SetBasicAuth(url.QueryEscape(user), pass)
		}
		w := env.do(req)
		var out struct{ Error string }
		json.Unmarshal(w.Body.Bytes(), &out)
		return w.Code, out.Error, w.Header()
	}
	live := func(what, token string) {
		t.Helper()
		if res, _ := bearerGet(b, "/api", token); res.StatusCode != 200 {
			t.Errorf("%s = %d, want it live", what, res.StatusCode)
		}
	}

	// RFC 7009 §2.1: the token must have been issued to the client asking;
	// else the request is refused and nothing is revoked.
	for _, tc := range []struct {
		name, clientID, user, pass string
		want                       int
		code                       string
	}{
		{"no client", "", "", "", 400, "invalid_request"},
		{"another client in the form", other.conf.ClientID, "", "", 401, "invalid_client"},
		{"another client by Basic", "", other.conf.ClientID, "", 401, "invalid_client"},
		{"Basic with a secret", "", c.conf.ClientID, "s3cret", 401, "invalid_client"},
		{"Basic with an unknown client", "", "oc_nobody", "", 401, "invalid_client"},
	} {
		status, code, h := revoke(tok.RefreshToken, tc.clientID, tc.user, tc.pass)
		if status != tc.want || code != tc.code {
			t.Errorf("revoke, %s = %d %s, want %d %s", tc.name, status, code, tc.want, tc.code)
		}
		if tc.want == 401 && !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic") {
			t.Errorf("revoke, %s: WWW-Authenticate = %q, want a Basic challenge (RFC 6749 §5.2)", tc.name, h.Get("WWW-Authenticate"))
		}
		live(tc.name+": the token after a refused revocation", tok.AccessToken)
	}
	// RFC 7009 §2.1: the request is form-encoded, as at the token endpoint.
	asJSON, _ := json.Marshal(map[string]string{"token": tok.RefreshToken, "client_id": c.conf.ClientID})
	res, body := b.json("POST", "/api/oauth/revoke", string(asJSON))
	if res.StatusCode != 400 || !strings.Contains(body, `"invalid_request"`) || !strings.Contains(body, "form-encoded") {
		t.Errorf("a revocation sent as JSON = %d %s, want 400 invalid_request asking for a form", res.StatusCode, body)
	}
	live("the token after a revocation sent as JSON", tok.AccessToken)

	// RFC 7009 §2.2: an unknown token is answered 200.
	if status, code, _ := revoke("rt_never_issued", c.conf.ClientID, "", ""); status != 200 {
		t.Errorf("revoking an unknown token = %d %s, want 200", status, code)
	}
	// The client by Basic, as golang.org/x/oauth2 sends it.
	if status, code, _ := revoke(tok.RefreshToken, "", c.conf.ClientID, ""); status != 200 {
		t.Errorf("revoke by Basic = %d %s, want 200", status, code)
	}
	if res, _ := bearerGet(b, "/api", tok.AccessToken); res.StatusCode != 401 {
		t.Errorf("access token after its refresh token was revoked = %d, want 401", res.StatusCode)
	}
	status, out := postToken(t, b, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {c.conf.ClientID}})
	if status != 400 || out["error"] != "invalid_grant" {
		t.Errorf("revoked refresh token = %d %v, want invalid_grant", status, out)
	}
	// The client in the form; a token revoked again is still 200.
	live("the other client's token", otherTok.AccessToken)
	for range 2 {
		if res, _ := b.form("/api/oauth/revoke", url.Values{"token": {otherTok.AccessToken}, "token_type_hint": {"access_token"}, "client_id": {other.conf.ClientID}}); res.StatusCode != 200 {
			t.Errorf("revoke with client_id = %d, want 200", res.StatusCode)
		}
	}
	if res, _ := bearerGet(b, "/api", otherTok.AccessToken); res.StatusCode != 401 {
		t.Errorf("access token after its revocation = %d, want 401", res.StatusCode)
	}

	env.now = env.now.Add(31 * time.Minute)
	tok = grant(t, b, c, "s")
	env.now = env.now.Add(31 * time.Minute)
	if res, _ := bearerGet(b, "/api", tok.AccessToken); res.StatusCode != 401 {
		t.Errorf("access token after 31 minutes = %d, want 401 (it lives 30)", res.StatusCode)
	}
	if status, code, _ := revoke(tok.AccessToken, c.conf.ClientID, "", ""); status != 200 {
		t.Errorf("revoking an expired token = %d %s, want 200", status, code)
	}
}

// Exchanges of one code racing each other: one wins, the others are
// reuses, and the winner's tokens are revoked as for any reuse.
func TestOAuthConcurrentExchangesOfOneCode(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := signedInBrowser(t, env, "user@example.com")
	c := registerClient(t, b, "https://app.example/cb")
	verifier := oauth2.GenerateVerifier()
	code := authorize(t, b, c, "s", verifier)
	const racers = 6
	toks := make([]*oauth2.Token, racers)
	errs := make([]error, racers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			toks[i], errs[i] = c.conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
		})
	}
	close(start)
	wg.Wait()
	var winner *oauth2.Token
	for i, err := range errs {
		switch {
		case err == nil && winner == nil:
			winner = toks[i]
		case err == nil:
			t.Errorf("two exchanges of one code succeeded")
		case !isOAuthError(err, "invalid_grant"):
			t.Errorf("exchange %d = %v, want invalid_grant", i, err)
		}
	}
	if winner == nil {
		t.Fatal("no exchange succeeded")
	}
	if res, _ := bearerGet(b, "/api", winner.AccessToken); res.StatusCode != 401 {
		t.Errorf("the winner's token after the reuses = %d, want 401", res.StatusCode)
	}
}

// The account page lists the apps the person allowed, and ends one's
// access: its tokens stop at once and its refresh is invalid_grant.
// Another person cannot end it, and ending it twice is a 404 on the page.
func TestAccountPageEndsAnAppsAccess(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := signedInBrowser(t, env, "allowed@example.com")
	c := registerClient(t, b, "https://app.example/cb")
	tok := grant(t, b, c, "s")
	if res, _ := bearerGet(b, "/api", tok.AccessToken); res.StatusCode != 200 {
		t.Fatalf("the app's token before = %d", res.StatusCode)
	}
	res, page := b.do("GET", "/account", "", "")
	if res.StatusCode != 200 || !strings.Contains(page, `<tr id="app-`+c.conf.ClientID+`"><td data-label="App">Price Watcher`) ||
		!strings.Contains(page, `action="/account/apps/`+c.conf.ClientID+`/revoke"`) {
		t.Fatalf("the account page = %d, want the app and its form:\n%s", res.StatusCode, page)
	}

	other := signedInBrowser(t, env, "other@example.com")
	res, body := other.form("/account/apps/"+c.conf.ClientID+"/revoke", url.Values{"csrf_token": {other.formToken("/account")}})
	if res.StatusCode != 404 || !strings.Contains(body, "no app of that id") {
		t.Errorf("another person ending the app = %d %s, want 404", res.StatusCode, body)
	}
	if res, _ := bearerGet(b, "/api", tok.AccessToken); res.StatusCode != 200 {
		t.Errorf("the app's token after another person's try = %d, want it still good", res.StatusCode)
	}

	form := url.Values{"csrf_token": {b.formToken("/account")}}
	if res, _ := b.form("/account/apps/"+c.conf.ClientID+"/revoke", form); res.StatusCode != 303 || res.Header.Get("Location") != "/account" {
		t.Fatalf("ending the app's access = %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ := bearerGet(b, "/api", tok.AccessToken); res.StatusCode != 401 {
		t.Errorf("the app's token after its access ended = %d, want 401", res.StatusCode)
	}
	status, out := postToken(t, b, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {c.conf.ClientID}})
	if status != 400 || out["error"] != "invalid_grant" {
		t.Errorf("the app's refresh after its access ended = %d %v, want invalid_grant", status, out)
	}
	if _, page := b.do("GET", "/account", "", ""); strings.Contains(page, `id="app-`) || !strings.Contains(page, "No apps.") {
		t.Errorf("the account page still lists the app:\n%s", page)
	}
	if res, _ := b.form("/account/apps/"+c.conf.ClientID+"/revoke", form); res.StatusCode != 404 {
		t.Errorf("ending it again = %d, want 404", res.StatusCode)
	}
}
