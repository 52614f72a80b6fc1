// Package oauth is the service's OAuth 2.1 authorization server for public
// clients: dynamic registration (RFC 7591), authorization codes bound to a
// PKCE S256 challenge, access and rotating refresh tokens with reuse
// detection, and revocation (RFC 7009). Codes and tokens are random and
// stored only as SHA-256 hashes. It knows nothing of HTTP; package api
// speaks the protocol.
package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
)

// Lifetimes (SPEC §5.2, §8). A grant, the person's consent, lasts
// GrantTTL from its code: its refresh tokens rotate, each for up to
// RefreshTTL, and no token of it lives past its end, after which the
// person is asked to consent again. A stolen refresh token kept in use
// thus dies at the latest with its grant.
const (
	CodeTTL    = 60 * time.Second
	AccessTTL  = 30 * time.Minute
	RefreshTTL = 30 * 24 * time.Hour
	GrantTTL   = 90 * 24 * time.Hour
)

// Limits, in bytes, of a registered redirect URI and of an authorization
// request's state (which PKCE makes optional).
const (
	MaxRedirectURILen = 2000
	MaxStateLen       = 500
)

// ScopePricingRead is the only scope: it unmasks marketplace prices.
const ScopePricingRead = "pricing:read"

// Scopes are the scopes the server grants.
var Scopes = []string{ScopePricingRead}

// Error is an OAuth error (RFC 6749 §5.2, RFC 7591 §3.2.2): Code is the
// protocol's error code, Description is for the developer.
type Error struct {
	Code        string
	Description string
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

func oauthError(code, format string, args ...any) *Error {
	return &Error{Code: code, Description: fmt.Sprintf(format, args...)}
}

// ErrInvalidToken is an access token that is unknown, expired or revoked.
var ErrInvalidToken = errors.New("oauth: invalid token")

// Server is the authorization server's state in one database.
type Server struct {
	db  *gorm.DB
	now func() time.Time
	// resources are the resources (RFC 8707) a grant may be bound to.
	resources []string
}

// New returns a Server on db; now is its clock; resources are the
// absolute URIs of the resources a client may ask a token for (RFC 8707).
func New(db *gorm.DB, now func() time.Time, resources []string) *Server {
	return &Server{db: db, now: now, resources: resources}
}

// Register registers a public client (RFC 7591). Redirect URIs must be
// absolute https URLs, or http on a loopback address (RFC 8252 §7.3), with
// no fragment.
func (s *Server) Register(ctx context.Context, name string, redirectURIs []string) (models.OAuthClient, error) {
	name = strings.TrimSpace(name)
	switch {
	case len(redirectURIs) == 0:
		return models.OAuthClient{}, oauthError("invalid_redirect_uri", "redirect_uris must list at least one URI")
	case len(redirectURIs) > 10:
		return models.OAuthClient{}, oauthError("invalid_redirect_uri", "at most 10 redirect_uris")
	case len(name) > 200:
		return models.OAuthClient{}, oauthError("invalid_client_metadata", "client_name is longer than 200 characters")
	case strings.ContainsFunc(name, unicode.IsControl): // shown on the consent page; Postgres holds no NUL
		return models.OAuthClient{}, oauthError("invalid_client_metadata", "client_name must not hold control characters")
	}
	for _, u := range redirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return models.OAuthClient{}, oauthError("invalid_redirect_uri", "%s: %s", u, err)
		}
	}
	if name == "" {
		name = "unnamed client"
	}
	c := models.OAuthClient{ID: secret.NewID("oc_"), Name: name, RedirectURIs: redirectURIs, CreatedAt: s.now().UTC()}
	if err := s.db.WithContext(ctx).Create(&c).Error; err != nil {
		return models.OAuthClient{}, fmt.Errorf("register client: %w", err)
	}
	return c, nil
}

func checkRedirectURI(raw string) error {
	if len(raw) > MaxRedirectURILen {
		return fmt.Errorf("longer than %d characters", MaxRedirectURILen)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return errors.New("not an absolute URL")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return errors.New("must not have a fragment")
	case u.User != nil:
		return errors.New("must not carry user information")
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return nil
	}
	return errors.New("must be https, or http on a loopback address")
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// client returns a registered client, or the invalid_client error.
func (s *Server) client(ctx context.Context, id string) (models.OAuthClient, error) {
	if id == "" {
		return models.OAuthClient{}, oauthError("invalid_request", "client_id is required")
	}
	if !models.Storable(id) { // percent-decoded from a Basic header: no client's, and no query for Postgres to refuse
		return models.OAuthClient{}, oauthError("invalid_client", "client_id is not registered")
	}
	var c models.OAuthClient
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return models.OAuthClient{}, oauthError("invalid_client", "client_id %q is not registered", id)
	}
	if err != nil {
		return models.OAuthClient{}, fmt.Errorf("find client: %w", err)
	}
	return c, nil
}

// AuthorizeRequest is the part of an authorization request (RFC 6749
// §4.1.1 with RFC 7636) that must be checked before a code is issued.
type AuthorizeRequest struct {
	ResponseType        string
	ClientID            string
	RedirectURI         string
	CodeChallenge       string
	CodeChallengeMethod string
	State               string
	Scope               string
	// Resource is the resource the token is asked for (RFC 8707), "" for none.
	Resource string
}

var challengePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// CheckClient checks the parts of r that decide whether errors may be sent
// to the redirect URI: a known client and one of its exact redirect URIs.
// An error here must be shown to the person, never redirected.
func (s *Server) CheckClient(ctx context.Context, r AuthorizeRequest) (models.OAuthClient, error) {
	c, err := s.client(ctx, r.ClientID)
	if err != nil {
		return models.OAuthClient{}, err
	}
	if !slices.Contains(c.RedirectURIs, r.RedirectURI) {
		return models.OAuthClient{}, oauthError("invalid_request", "redirect_uri is not one this client registered (it must match exactly)")
	}
	return c, nil
}

// CheckRequest checks the rest of r, once CheckClient passed. It returns
// the scope to grant.
func (s *Server) CheckRequest(r AuthorizeRequest) (string, error) {
	switch {
	case r.ResponseType != "code":
		return "", oauthError("unsupported_response_type", "response_type must be code")
	case r.CodeChallenge == "" || r.CodeChallengeMethod == "":
		return "", oauthError("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256")
	case r.CodeChallengeMethod != "S256":
		return "", oauthError("invalid_request", "code_challenge_method must be S256")
	case !challengePattern.MatchString(r.CodeChallenge):
		return "", oauthError("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier (43 characters)")
	case len(r.State) > MaxStateLen: // optional: PKCE protects the flow (OAuth 2.1)
		return "", oauthError("invalid_request", "state is longer than %d characters", MaxStateLen)
	}
	if err := s.checkResource(r.Resource); err != nil {
		return "", err
	}
	return checkScope(r.Scope, Scopes)
}

// checkResource refuses a resource the server issues no tokens for.
func (s *Server) checkResource(resource string) error {
	if resource != "" && !slices.Contains(s.resources, resource) {
		return oauthError("invalid_target", "resource %q is not one of %s", resource, strings.Join(s.resources, ", "))
	}
	return nil
}

// bindResource is the resource a token is issued for: the one the token
// request names, which must be the grant's when the grant named one.
func (s *Server) bindResource(granted, asked string) (string, error) {
	if asked == "" {
		return granted, nil
	}
	if err := s.checkResource(asked); err != nil {
		return "", err
	}
	if granted != "" && granted != asked {
		return "", oauthError("invalid_target", "the grant is for %s, not %s", granted, asked)
	}
	return asked, nil
}

// checkScope returns the granted scope for a requested one: every scope in
// allowed when none is asked for; an error for anything not allowed.
func checkScope(requested string, allowed []string) (string, error) {
	fields := strings.Fields(requested)
	if len(fields) == 0 {
		return strings.Join(allowed, " "), nil
	}
	for _, f := range fields {
		if !slices.Contains(allowed, f) {
			return "", oauthError("invalid_scope", "scope %q is not available; use %s", f, strings.Join(allowed, " "))
		}
	}
	slices.Sort(fields)
	return strings.Join(slices.Compact(fields), " "), nil
}

// IssueCode records the person's approval of r (already checked) and
// returns the authorization code for the redirect.
func (s *Server) IssueCode(ctx context.Context, r AuthorizeRequest, userID, scope string) (string, error) {
	code := "ac_" + secret.New()
	now := s.now().UTC()
	row := models.OAuthCode{Hash: secret.Hash(code), ClientID: r.ClientID, UserID: userID, RedirectURI: r.RedirectURI,
		CodeChallenge: r.CodeChallenge, Scope: scope, Resource: r.Resource, ExpiresAt: now.Add(CodeTTL), CreatedAt: now}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return tx.Model(&models.OAuthClient{}).Where("id = ? AND used_at IS NULL", r.ClientID).Update("used_at", now).Error
	})
	if err != nil {
		return "", fmt.Errorf("issue code: %w", err)
	}
	return code, nil
}

// Tokens is a token response (RFC 6749 §5.1).
type Tokens struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

var (
	errBadGrant   = oauthError("invalid_grant", "the code is invalid, expired or already used, or was issued to another client or redirect_uri")
	errBadRefresh = oauthError("invalid_grant", "the refresh token is invalid, expired, revoked or already used")
)

// ExchangeCode redeems an authorization code (grant_type
// authorization_code). A code presented twice is refused and every token
// issued from it revoked (RFC 6749 §4.1.2). resource, when given, binds the
// tokens to it (RFC 8707).
func (s *Server) ExchangeCode(ctx context.Context, clientID, code, redirectURI, verifier, resource string) (Tokens, error) {
	if code == "" || redirectURI == "" || verifier == "" {
		return Tokens{}, oauthError("invalid_request", "code, redirect_uri and code_verifier are required")
	}
	if err := s.checkClientID(ctx, clientID); err != nil {
		return Tokens{}, err
	}
	var out Tokens
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var c models.OAuthCode
		err := tx.Where("hash = ?", secret.Hash(code)).Take(&c).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return errBadGrant
		}
		if err != nil {
			return err
		}
		now := s.now().UTC()
		if c.UsedAt != nil {
			return &errReuse{family: c.Hash}
		}
		if c.ClientID != clientID || c.RedirectURI != redirectURI || !now.Before(c.ExpiresAt) {
			return errBadGrant
		}
		if !verifierMatches(verifier, c.CodeChallenge) {
			return oauthError("invalid_grant", "code_verifier does not match the code_challenge")
		}
		bound, err := s.bindResource(c.Resource, resource)
		if err != nil {
			return err
		}
		// Spend the code; a concurrent exchange of the same code finds it
		// spent, and that is a reuse like any other.
		res := tx.Model(&models.OAuthCode{}).Where("hash = ? AND used_at IS NULL", c.Hash).Update("used_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return &errReuse{family: c.Hash}
		}
		out, err = s.issue(tx, c, c.Scope, bound, now)
		return err
	})
	if err != nil {
		return Tokens{}, s.settleReuse(ctx, err)
	}
	return out, nil
}

// errReuse is a spent code or refresh token presented again: a sign that
// it leaked. It ends its transaction (nothing is issued), and then
// settleReuse revokes the family and answers invalid_grant.
type errReuse struct{ family string }

func (e *errReuse) Error() string { return "oauth: reuse of a spent grant" }

// settleReuse turns an errReuse into the revocation of its family and the
// protocol's answer; other errors pass through. The revocation is made
// even when the client has gone: a reuse found must not be forgotten.
func (s *Server) settleReuse(ctx context.Context, err error) error {
	var reuse *errReuse
	if !errors.As(err, &reuse) {
		return err
	}
	if rerr := s.revokeFamily(context.WithoutCancel(ctx), reuse.family); rerr != nil {
		return fmt.Errorf("revoke reused grant: %w", rerr)
	}
	return oauthError("invalid_grant", "this grant was already used; every token issued from it is revoked")
}

// revokeFamily revokes every token descending from the code whose hash is
// family: the family's root is marked, which Authenticate and Refresh
// check, so tokens a concurrent refresh commits afterwards are dead too;
// the tokens are marked as well, for the record.
func (s *Server) revokeFamily(ctx context.Context, family string) error {
	now := s.now().UTC()
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&models.OAuthCode{}).Where("hash = ? AND revoked_at IS NULL", family).Update("revoked_at", now).Error; err != nil {
			return err
		}
		return tx.Model(&models.OAuthToken{}).Where("family = ? AND revoked_at IS NULL", family).Update("revoked_at", now).Error
	})
}

// Refresh rotates a refresh token (grant_type refresh_token): the old one
// is spent, and presenting a spent one revokes the whole family. scope, when
// given, narrows the grant; resource, when given, must be the grant's.
func (s *Server) Refresh(ctx context.Context, clientID, refreshToken, scope, resource string) (Tokens, error) {
	if refreshToken == "" {
		return Tokens{}, oauthError("invalid_request", "refresh_token is required")
	}
	if err := s.checkClientID(ctx, clientID); err != nil {
		return Tokens{}, err
	}
	var out Tokens
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var t models.OAuthToken
		err := tx.Where("hash = ? AND kind = ?", secret.Hash(refreshToken), models.TokenRefresh).Take(&t).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return errBadRefresh
		}
		if err != nil {
			return err
		}
		now := s.now().UTC()
		var root models.OAuthCode
		if err := tx.Where("hash = ?", t.Family).Take(&root).Error; err != nil {
			return err
		}
		switch {
		case t.ClientID != clientID:
			return errBadRefresh
		case t.UsedAt != nil:
			return &errReuse{family: t.Family}
		case t.RevokedAt != nil || root.RevokedAt != nil || !now.Before(t.ExpiresAt) || !now.Before(grantEnd(root)):
			return errBadRefresh
		}
		granted, err := checkScope(scope, strings.Fields(t.Scope))
		if err != nil {
			return err
		}
		bound, err := s.bindResource(t.Resource, resource)
		if err != nil {
			return err
		}
		res := tx.Model(&models.OAuthToken{}).Where("hash = ? AND used_at IS NULL", t.Hash).Update("used_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 { // rotated meanwhile by a concurrent request: a reuse
			return &errReuse{family: t.Family}
		}
		out, err = s.issue(tx, root, granted, bound, now)
		return err
	})
	if err != nil {
		return Tokens{}, s.settleReuse(ctx, err)
	}
	return out, nil
}

func (s *Server) checkClientID(ctx context.Context, id string) error {
	_, err := s.client(ctx, id)
	return err
}

// issue makes an access and a refresh token of grant, the family's code,
// for scope and resource, neither living past the grant's end.
func (s *Server) issue(tx *gorm.DB, grant models.OAuthCode, scope, resource string, now time.Time) (Tokens, error) {
	end := grantEnd(grant)
	until := func(ttl time.Duration) time.Time {
		if t := now.Add(ttl); t.Before(end) {
			return t
		}
		return end
	}
	accessEnd, refreshEnd := until(AccessTTL), until(RefreshTTL)
	access, refresh := "at_"+secret.New(), "rt_"+secret.New()
	token := func(hash, kind string, expires time.Time) models.OAuthToken {
		return models.OAuthToken{Hash: hash, Kind: kind, Family: grant.Hash, ClientID: grant.ClientID, UserID: grant.UserID,
			Scope: scope, Resource: resource, ExpiresAt: expires, CreatedAt: now}
	}
	rows := []models.OAuthToken{
		token(secret.Hash(access), models.TokenAccess, accessEnd),
		token(secret.Hash(refresh), models.TokenRefresh, refreshEnd),
	}
	if err := tx.Create(&rows).Error; err != nil {
		return Tokens{}, fmt.Errorf("issue tokens: %w", err)
	}
	return Tokens{AccessToken: access, TokenType: "Bearer", ExpiresIn: int(accessEnd.Sub(now) / time.Second),
		RefreshToken: refresh, Scope: scope}, nil
}

// grantEnd is when the grant whose code is c ends, and every token of it.
func grantEnd(c models.OAuthCode) time.Time { return c.CreatedAt.Add(GrantTTL) }

// Revoke revokes a token (RFC 7009) at the request of the client
// clientID. Revoking a refresh token revokes its whole family (the access
// tokens issued with it too). The client must name itself: no client_id
// is invalid_request, an unknown one invalid_client; and a token issued to
// another client is refused, invalid_client, and stays live (§2.1). An
// unknown token, or one expired or already revoked, is no error (§2.2):
// there is nothing to revoke, and the client can do nothing about it.
func (s *Server) Revoke(ctx context.Context, token, clientID string) error {
	if err := s.checkClientID(ctx, clientID); err != nil {
		return err
	}
	if token == "" {
		return oauthError("invalid_request", "token is required")
	}
	db := s.db.WithContext(ctx)
	var t models.OAuthToken
	err := db.Where("hash = ?", secret.Hash(token)).Take(&t).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("find token: %w", err)
	}
	if t.ClientID != clientID {
		return oauthError("invalid_client", "the token was not issued to this client")
	}
	if t.Kind == models.TokenRefresh {
		return s.revokeFamily(ctx, t.Family)
	}
	if err := db.Model(&models.OAuthToken{}).Where("hash = ? AND revoked_at IS NULL", t.Hash).Update("revoked_at", s.now().UTC()).Error; err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	return nil
}

// Authenticate returns the live access token presented as a bearer token
// to resource, or ErrInvalidToken (a token bound to another resource is
// not valid here: RFC 8707 §2). A token bound to no resource, or to one of
// accepted's, is.
func (s *Server) Authenticate(ctx context.Context, accessToken string, accepted ...string) (models.OAuthToken, error) {
	if accessToken == "" || len(accessToken) > 200 {
		return models.OAuthToken{}, ErrInvalidToken
	}
	var t models.OAuthToken
	err := s.db.WithContext(ctx).
		Joins("JOIN oauth_codes ON oauth_codes.hash = oauth_tokens.family AND oauth_codes.revoked_at IS NULL").
		Where("oauth_tokens.hash = ? AND oauth_tokens.kind = ? AND oauth_tokens.revoked_at IS NULL AND oauth_tokens.expires_at > ?",
			secret.Hash(accessToken), models.TokenAccess, s.now().UTC()).
		Take(&t).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return models.OAuthToken{}, ErrInvalidToken
	}
	if err != nil {
		return models.OAuthToken{}, fmt.Errorf("find access token: %w", err)
	}
	if t.Resource != "" && !slices.Contains(accepted, t.Resource) {
		return models.OAuthToken{}, ErrInvalidToken
	}
	return t, nil
}

// verifierMatches checks a PKCE verifier against an S256 challenge (RFC 7636 §4.6).
func verifierMatches(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}
