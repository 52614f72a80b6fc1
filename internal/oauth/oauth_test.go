package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

const (
	api      = "https://domaind.test"
	mcp      = "https://domaind.test/mcp"
	redirect = "https://app.example/callback"
	verifier = "the-verifier-of-this-test-is-long-enough-0123456789"
)

// world is an authorization server on a fresh database and a clock the
// test moves, with one registered client.
type world struct {
	s      *Server
	now    time.Time
	client models.OAuthClient
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{now: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
	w.s = New(modelstest.NewDB(t), func() time.Time { return w.now }, []string{api, mcp})
	c, err := w.s.Register(context.Background(), " Test App ", []string{redirect, "http://127.0.0.1:8765/cb"})
	if err != nil {
		t.Fatal(err)
	}
	w.client = c
	return w
}

func challenge(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func (w *world) request(resource string) AuthorizeRequest {
	return AuthorizeRequest{ResponseType: "code", ClientID: w.client.ID, RedirectURI: redirect, CodeChallenge: challenge(verifier),
		CodeChallengeMethod: "S256", State: "st", Resource: resource}
}

// code runs the authorization step for resource and returns the code.
func (w *world) code(t *testing.T, resource string) string {
	t.Helper()
	r := w.request(resource)
	if _, err := w.s.CheckClient(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	scope, err := w.s.CheckRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	code, err := w.s.IssueCode(context.Background(), r, "user-1", scope)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

func oauthCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestRegisterChecksRedirectURIs(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if w.client.Name != "Test App" || !strings.HasPrefix(w.client.ID, "oc_") {
		t.Errorf("client = %+v", w.client)
	}
	for _, tc := range []struct {
		uris []string
		want string
	}{
		{nil, "invalid_redirect_uri"},
		{[]string{"http://app.example/cb"}, "invalid_redirect_uri"}, // http off loopback
		{[]string{"https://app.example/cb#frag"}, "invalid_redirect_uri"},
		{[]string{"https://user:pw@app.example/cb"}, "invalid_redirect_uri"},
		{[]string{"/relative"}, "invalid_redirect_uri"},
		{[]string{"http://localhost:9/cb", "https://ok.example/cb"}, ""},
		{strings.Fields(strings.Repeat("https://a.example/cb ", 11)), "invalid_redirect_uri"},
	} {
		_, err := w.s.Register(context.Background(), "x", tc.uris)
		if got := oauthCode(err); got != tc.want || (tc.want == "" && err != nil) {
			t.Errorf("Register(%q) = %v, want %q", tc.uris, err, tc.want)
		}
	}
	// The name is shown on the consent page, and Postgres holds no NUL.
	for _, name := range []string{"a\x00b", "line\nbreak"} {
		if _, err := w.s.Register(context.Background(), name, []string{"https://ok.example/cb"}); oauthCode(err) != "invalid_client_metadata" {
			t.Errorf("Register named %q = %v, want invalid_client_metadata", name, err)
		}
	}
}

func TestAuthorizeRequestChecks(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, tc := range []struct {
		name string
		edit func(r *AuthorizeRequest)
		want string
	}{
		{"good", func(*AuthorizeRequest) {}, ""},
		{"token flow", func(r *AuthorizeRequest) { r.ResponseType = "token" }, "unsupported_response_type"},
		{"no PKCE", func(r *AuthorizeRequest) { r.CodeChallenge = "" }, "invalid_request"},
		{"plain PKCE", func(r *AuthorizeRequest) { r.CodeChallengeMethod = "plain" }, "invalid_request"},
		{"short challenge", func(r *AuthorizeRequest) { r.CodeChallenge = "abc" }, "invalid_request"},
		{"long state", func(r *AuthorizeRequest) { r.State = strings.Repeat("s", 501) }, "invalid_request"},
		{"unknown resource", func(r *AuthorizeRequest) { r.Resource = "https://elsewhere.example" }, "invalid_target"},
		{"unknown scope", func(r *AuthorizeRequest) { r.Scope = "admin" }, "invalid_scope"},
	} {
		r := w.request("")
		tc.edit(&r)
		scope, err := w.s.CheckRequest(r)
		if got := oauthCode(err); got != tc.want || (tc.want == "" && (err != nil || scope != ScopePricingRead)) {
			t.Errorf("%s: %q, %v; want %q", tc.name, scope, err, tc.want)
		}
	}
	r := w.request("")
	r.RedirectURI = redirect + "/other"
	if _, err := w.s.CheckClient(context.Background(), r); oauthCode(err) != "invalid_request" {
		t.Errorf("a redirect URI not registered: %v", err)
	}
	r.ClientID = "oc_nosuch"
	if _, err := w.s.CheckClient(context.Background(), r); err == nil {
		t.Error("an unknown client passed")
	}
}

// The code flow end to end: a code gives tokens once; the access token
// authenticates for its resource and not another; refresh rotates; a
// spent refresh token or code presented again revokes the whole family.
func TestCodeTokensRefreshAndReuse(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	code := w.code(t, mcp)
	if _, err := w.s.ExchangeCode(ctx, w.client.ID, code, redirect, "a-wrong-verifier-that-is-long-enough-0123456789", ""); oauthCode(err) != "invalid_grant" {
		t.Errorf("a wrong verifier: %v", err)
	}
	if _, err := w.s.ExchangeCode(ctx, w.client.ID, code, redirect, verifier, api); oauthCode(err) != "invalid_target" {
		t.Errorf("another resource than the grant's: %v", err)
	}
	tok, err := w.s.ExchangeCode(ctx, w.client.ID, code, redirect, verifier, "")
	if err != nil || tok.TokenType != "Bearer" || tok.ExpiresIn != int(AccessTTL/time.Second) || tok.Scope != ScopePricingRead {
		t.Fatalf("exchange = %+v, %v", tok, err)
	}
	if _, err := w.s.Authenticate(ctx, tok.AccessToken, mcp); err != nil {
		t.Errorf("the token for its resource: %v", err)
	}
	if _, err := w.s.Authenticate(ctx, tok.AccessToken, api); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("the token for another resource: %v", err)
	}
	next, err := w.s.Refresh(ctx, w.client.ID, tok.RefreshToken, "", "")
	if err != nil || next.RefreshToken == tok.RefreshToken {
		t.Fatalf("refresh = %+v, %v", next, err)
	}
	if _, err := w.s.Refresh(ctx, w.client.ID, tok.RefreshToken, "", ""); oauthCode(err) != "invalid_grant" {
		t.Errorf("the spent refresh token again: %v", err)
	}
	for _, at := range []string{tok.AccessToken, next.AccessToken} {
		if _, err := w.s.Authenticate(ctx, at, mcp); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("a token of a family whose refresh token was reused still works: %v", err)
		}
	}
	if _, err := w.s.Refresh(ctx, w.client.ID, next.RefreshToken, "", ""); oauthCode(err) != "invalid_grant" {
		t.Errorf("the family's live refresh token after a reuse: %v", err)
	}

	second := w.code(t, "")
	tok2, err := w.s.ExchangeCode(ctx, w.client.ID, second, redirect, verifier, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.s.ExchangeCode(ctx, w.client.ID, second, redirect, verifier, ""); oauthCode(err) != "invalid_grant" {
		t.Errorf("a code exchanged twice: %v", err)
	}
	if _, err := w.s.Authenticate(ctx, tok2.AccessToken, api); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a token of a code exchanged twice still works: %v", err)
	}

	late := w.code(t, "")
	w.now = w.now.Add(CodeTTL)
	if _, err := w.s.ExchangeCode(ctx, w.client.ID, late, redirect, verifier, ""); oauthCode(err) != "invalid_grant" {
		t.Errorf("an expired code: %v", err)
	}
}

// A grant refreshed on time lives GrantTTL from its consent and no
// longer: its last tokens end with it (the access token's expires_in
// shrinks to fit), and a refresh at its end is invalid_grant, though the
// refresh token itself is younger than RefreshTTL.
func TestAGrantEndsGrantTTLAfterItsConsent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	consent := w.now
	tok, err := w.s.ExchangeCode(ctx, w.client.ID, w.code(t, ""), redirect, verifier, "")
	if err != nil {
		t.Fatal(err)
	}
	end := consent.Add(GrantTTL)
	step := RefreshTTL - time.Hour // refreshed each time a little before its refresh token expires
	for w.now.Add(step).Before(end) {
		w.now = w.now.Add(step)
		if tok, err = w.s.Refresh(ctx, w.client.ID, tok.RefreshToken, "", ""); err != nil {
			t.Fatalf("a refresh %s after the consent: %v", w.now.Sub(consent), err)
		}
	}
	w.now = end.Add(-10 * time.Minute)
	last, err := w.s.Refresh(ctx, w.client.ID, tok.RefreshToken, "", "")
	if err != nil || last.ExpiresIn != 600 {
		t.Fatalf("a refresh ten minutes before the grant's end = %+v, %v; want an access token for those ten minutes", last, err)
	}
	w.now = end
	if _, err := w.s.Authenticate(ctx, last.AccessToken); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("an access token at its grant's end: %v", err)
	}
	if _, err := w.s.Refresh(ctx, w.client.ID, last.RefreshToken, "", ""); oauthCode(err) != "invalid_grant" {
		t.Errorf("a refresh at the grant's end: %v, want invalid_grant", err)
	}
}

// A reuse found while its client goes away (the request's context ends
// once the spent token is found) still revokes the family: the attacker
// who spent it first would otherwise keep the live refresh token.
func TestAReuseRevokesTheFamilyWhenItsClientLeaves(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tok, err := w.s.ExchangeCode(context.Background(), w.client.ID, w.code(t, ""), redirect, verifier, "")
	if err != nil {
		t.Fatal(err)
	}
	stolen, err := w.s.Refresh(context.Background(), w.client.ID, tok.RefreshToken, "", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	err = w.s.db.Callback().Query().After("gorm:query").Register("test:leave", func(db *gorm.DB) {
		if db.Statement.Table == "oauth_codes" { // the family's root, read after the token
			leave()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.s.Refresh(ctx, w.client.ID, tok.RefreshToken, "", ""); oauthCode(err) != "invalid_grant" {
		t.Errorf("the spent token again, its client leaving: %v; want invalid_grant", err)
	}
	if _, err := w.s.Refresh(context.Background(), w.client.ID, stolen.RefreshToken, "", ""); oauthCode(err) != "invalid_grant" {
		t.Errorf("the family's live refresh token after the reuse: %v; want it revoked", err)
	}
}

// Two refreshes of one token at once: one rotates it, the other is a
// reuse, and the family ends revoked.
func TestConcurrentRefreshesRevokeTheFamily(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	tok, err := w.s.ExchangeCode(ctx, w.client.ID, w.code(t, ""), redirect, verifier, "")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = w.s.Refresh(ctx, w.client.ID, tok.RefreshToken, "", "") })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		}
	}
	if ok != 1 {
		t.Errorf("%d of 4 concurrent refreshes succeeded, want 1 (%v)", ok, errs)
	}
	if _, err := w.s.Authenticate(ctx, tok.AccessToken); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("after the reuses the family's access token = %v, want it revoked", err)
	}
}

// Revoking an access token ends it alone; a refresh token, its family.
// The client must name itself, and a token of another client is refused
// and stays live (RFC 7009 §2.1); an unknown or expired token is no error.
func TestRevoke(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	other, err := w.s.Register(ctx, "Other App", []string{redirect})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := w.s.ExchangeCode(ctx, w.client.ID, w.code(t, ""), redirect, verifier, "")
	b, _ := w.s.ExchangeCode(ctx, w.client.ID, w.code(t, ""), redirect, verifier, "")
	for _, tc := range []struct {
		name, token, clientID, want string
	}{
		{"no token", "", w.client.ID, "invalid_request"},
		{"no client", a.AccessToken, "", "invalid_request"},
		{"an unknown client", a.AccessToken, "oc_nobody", "invalid_client"},
		{"another client's access token", a.AccessToken, other.ID, "invalid_client"},
		{"another client's refresh token", a.RefreshToken, other.ID, "invalid_client"},
		{"an unknown token", "at_unknown", w.client.ID, ""},
	} {
		if err := w.s.Revoke(ctx, tc.token, tc.clientID); oauthCode(err) != tc.want || (tc.want == "") != (err == nil) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := w.s.Authenticate(ctx, a.AccessToken); err != nil {
		t.Errorf("a token after refused revocations: %v, want it live", err)
	}
	if err := w.s.Revoke(ctx, a.AccessToken, w.client.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.s.Authenticate(ctx, a.AccessToken); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a revoked access token: %v", err)
	}
	if _, err := w.s.Refresh(ctx, w.client.ID, a.RefreshToken, "", ""); err != nil {
		t.Errorf("its refresh token after the access token's revocation: %v", err)
	}
	if err := w.s.Revoke(ctx, b.RefreshToken, w.client.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.s.Authenticate(ctx, b.AccessToken); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("an access token of a revoked refresh token's family: %v", err)
	}
	if err := w.s.Revoke(ctx, b.RefreshToken, w.client.ID); err != nil {
		t.Errorf("a revoked token revoked again: %v, want no error", err)
	}
	w.now = w.now.Add(AccessTTL + time.Second)
	if err := w.s.Revoke(ctx, b.AccessToken, w.client.ID); err != nil {
		t.Errorf("an expired token: %v, want no error", err)
	}
}
