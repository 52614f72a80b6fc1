package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	mcpapi "github.com/domaind/domaind/api/mcp"
	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/oauth"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/services"
)

// oauthLimit bounds token requests per client address, and
// oauthRegisterLimit registrations (anonymous, and rows that stay a day).
var (
	oauthLimit         = ratelimit.PerMinute("oauth", 60)
	oauthRegisterLimit = ratelimit.Policy{Name: "oauth-register", Kind: ratelimit.Rate, Limit: 10, Window: time.Hour}
)

// scopeDescriptions say on the consent page what a scope lets a client do.
var scopeDescriptions = map[string]string{
	oauth.ScopePricingRead: "see marketplace buy-now and floor prices",
}

// base is the service's public base URL without a trailing slash.
func (s *Server) base() string { return services.BaseURL(s.cfg) }

// Resources are the protected resources (RFC 9728) the service's tokens
// may be bound to (RFC 8707): the service as a whole (its base URL), the
// API under /api, and the MCP server at /mcp. A bearer token is good at
// /api or /mcp when it is bound to it, to the whole service, or to none.
func Resources(cfg *config.Config) []string {
	base := services.BaseURL(cfg)
	return []string{base, base + apiResourcePath, base + mcpapi.Path}
}

// apiResourcePath is the path of the API as a protected resource.
const apiResourcePath = "/api"

// authServerMetadata answers GET /.well-known/oauth-authorization-server (RFC 8414).
func (s *Server) authServerMetadata(c *gin.Context) {
	b := s.base()
	c.JSON(http.StatusOK, gin.H{
		"issuer":                                     b,
		"authorization_endpoint":                     b + "/oauth/authorize",
		"token_endpoint":                             b + "/api/oauth/token",
		"registration_endpoint":                      b + "/api/oauth/register",
		"revocation_endpoint":                        b + "/api/oauth/revoke",
		"response_types_supported":                   []string{"code"},
		"grant_types_supported":                      []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":           []string{"S256"},
		"token_endpoint_auth_methods_supported":      []string{"none"},
		"revocation_endpoint_auth_methods_supported": []string{"none"},
		"scopes_supported":                           oauth.Scopes,
		// RFC 9207: the authorization response names its issuer.
		"authorization_response_iss_parameter_supported": true,
	})
}

// protectedResourceMetadata answers GET /.well-known/oauth-protected-resource
// (RFC 9728), for the service as a whole, and the same path followed by
// /api for the API, or /mcp for the MCP server (§3.1: a resource's
// metadata lives at the well-known path with the resource's path
// appended, and names that resource, which strict clients compare with
// the URL they called). name is the resource's name for people.
func (s *Server) protectedResourceMetadata(resourcePath, name string) gin.HandlerFunc {
	return func(c *gin.Context) {
		b := s.base()
		c.JSON(http.StatusOK, gin.H{
			"resource":                 b + resourcePath,
			"authorization_servers":    []string{b},
			"scopes_supported":         oauth.Scopes,
			"bearer_methods_supported": []string{"header"},
			"resource_name":            name,
		})
	}
}

// challenge answers 401 with the RFC 6750 challenge pointing at the API's
// protected-resource metadata (every bearer route is under /api); errCode
// is "" for a request without a token.
func (s *Server) challenge(c *gin.Context, errCode, desc string) {
	v := fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource%s"`, s.base(), apiResourcePath)
	if errCode != "" {
		v += fmt.Sprintf(`, error="%s", error_description="%s"`, errCode, desc)
	}
	c.Header("WWW-Authenticate", v)
	code := fault.Code(errCode)
	if code == "" {
		code = fault.Unauthorized
	}
	s.resp.Error(c, &fault.Error{Code: code, Message: desc})
}

// withBearer reads an optional bearer token (Authorization: Bearer …) and
// makes its scopes known (hasScope). No token is fine; a token that is not
// valid is answered 401 invalid_token rather than served masked data, so
// that a client learns at once that its token needs refreshing.
func (s *Server) withBearer(c *gin.Context) {
	scheme, tok, _ := strings.Cut(c.GetHeader("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		c.Next() // no token, or another scheme: an anonymous request
		return
	}
	t, err := s.svc.OAuth.Authenticate(c.Request.Context(), strings.TrimSpace(tok), s.base(), s.base()+apiResourcePath)
	if err != nil {
		s.bearerRefused(c, err)
		return
	}
	c.Set(scopesCtxKey, strings.Fields(t.Scope))
	c.Next()
}

// bearerRefused answers a request whose bearer token did not authenticate.
func (s *Server) bearerRefused(c *gin.Context, err error) {
	if errors.Is(err, oauth.ErrInvalidToken) {
		s.challenge(c, "invalid_token", "the access token is invalid, expired or revoked")
		return
	}
	s.resp.Error(c, err)
}

// apiRoot answers GET /api: the bearer-protected root of the API. Without a
// token it is the challenge that starts OAuth discovery (RFC 9728 §5.1).
func (s *Server) apiRoot(c *gin.Context) {
	if _, ok := c.Get(scopesCtxKey); !ok {
		s.challenge(c, "", "a bearer token is required; see the resource metadata in WWW-Authenticate")
		return
	}
	scopes, _ := c.Get(scopesCtxKey)
	c.JSON(http.StatusOK, gin.H{"service": "domaind", "scopes": scopes,
		"resource_metadata": s.base() + "/.well-known/oauth-protected-resource" + apiResourcePath})
}

// oauthPaths are the OAuth protocol's endpoints: their errors, the
// middleware's included, take the protocol's shape.
var oauthPaths = map[string]bool{"/api/oauth/register": true, "/api/oauth/token": true, "/api/oauth/revoke": true}

// legacyPaths are the older endpoints, whose 400 and 401 take the legacy
// shape (SPEC §7.1).
var legacyPaths = map[string]bool{"/api/pricing/tld": true, "/api/v1/domains/available": true}

// errorShape marks the requests to the endpoints whose errors take a shape
// of their own, the OAuth protocol's (httpjson.OAuthErrors) or the older
// endpoints' (httpjson.Legacy), before any middleware may refuse them.
func errorShape(c *gin.Context) {
	switch path := c.FullPath(); {
	case oauthPaths[path]:
		httpjson.OAuthErrors(c)
	case legacyPaths[path]:
		httpjson.Legacy(c)
	}
	c.Next()
}

// writeOAuthError answers with err in the OAuth shape ({"error",
// "error_description"}, RFC 6749 §5.2 and RFC 7591 §3.2.2); errors of ours
// go through writeError.
func (s *Server) writeOAuthError(c *gin.Context, err error) {
	var oe *oauth.Error
	if !errors.As(err, &oe) {
		s.resp.Error(c, err)
		return
	}
	status := http.StatusBadRequest
	if oe.Code == "invalid_client" {
		status = http.StatusUnauthorized
		// RFC 6749 §5.2; public clients authenticate by client_id alone.
		c.Header("WWW-Authenticate", `Basic realm="domaind OAuth", error="invalid_client"`)
	}
	c.Header("Cache-Control", "no-store")
	c.AbortWithStatusJSON(status, gin.H{"error": oe.Code, "error_description": oe.Description})
}

// registerClient answers POST /api/oauth/register (RFC 7591, public clients).
func (s *Server) registerClient(c *gin.Context) {
	var req struct {
		RedirectURIs            []string `json:"redirect_uris"`
		ClientName              string   `json:"client_name"`
		TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
		GrantTypes              []string `json:"grant_types"`
		ResponseTypes           []string `json:"response_types"`
		Scope                   string   `json:"scope"`
	}
	if err := httpjson.RequireJSON(c); err != nil {
		s.writeOAuthError(c, &oauth.Error{Code: "invalid_client_metadata", Description: "send the client metadata as application/json"})
		return
	}
	if err := c.ShouldBindJSON(&req); err != nil {
		s.writeOAuthError(c, &oauth.Error{Code: "invalid_client_metadata", Description: "the body must be a JSON object of client metadata"})
		return
	}
	if m := req.TokenEndpointAuthMethod; m != "" && m != "none" {
		s.writeOAuthError(c, &oauth.Error{Code: "invalid_client_metadata", Description: "only public clients: token_endpoint_auth_method must be none"})
		return
	}
	for _, g := range req.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			s.writeOAuthError(c, &oauth.Error{Code: "invalid_client_metadata", Description: fmt.Sprintf("grant type %q is not supported", g)})
			return
		}
	}
	for _, r := range req.ResponseTypes {
		if r != "code" {
			s.writeOAuthError(c, &oauth.Error{Code: "invalid_client_metadata", Description: fmt.Sprintf("response type %q is not supported", r)})
			return
		}
	}
	for _, sc := range strings.Fields(req.Scope) {
		if !slices.Contains(oauth.Scopes, sc) {
			s.writeOAuthError(c, &oauth.Error{Code: "invalid_client_metadata", Description: fmt.Sprintf("scope %q is not available", sc)})
			return
		}
	}
	cl, err := s.svc.OAuth.Register(c.Request.Context(), req.ClientName, req.RedirectURIs)
	if err != nil {
		s.writeOAuthError(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusCreated, gin.H{
		"client_id":                  cl.ID,
		"client_id_issued_at":        cl.CreatedAt.Unix(),
		"client_name":                cl.Name,
		"redirect_uris":              cl.RedirectURIs,
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
		"scope":                      strings.Join(oauth.Scopes, " "),
	})
}

// authorizeRequest reads the authorization request's parameters from the
// query (GET) or the consent form (POST).
func authorizeRequest(get func(string) string) oauth.AuthorizeRequest {
	return oauth.AuthorizeRequest{
		ResponseType: get("response_type"), ClientID: get("client_id"), RedirectURI: get("redirect_uri"),
		CodeChallenge: get("code_challenge"), CodeChallengeMethod: get("code_challenge_method"),
		State: get("state"), Scope: get("scope"), Resource: get("resource"),
	}
}

// authorizeParams are the parameters of the authorization request r, as
// authorizeRequest reads them.
func authorizeParams(r oauth.AuthorizeRequest) map[string]string {
	return map[string]string{"response_type": r.ResponseType, "client_id": r.ClientID,
		"redirect_uri": r.RedirectURI, "code_challenge": r.CodeChallenge,
		"code_challenge_method": r.CodeChallengeMethod, "state": r.State, "scope": r.Scope, "resource": r.Resource}
}

// authorizeNext is where a person who signs in first comes back to: the
// authorization request r, checked, as a GET of its own parameters only,
// whether it came as a GET or as the consent form's POST (whose path
// alone would lose the request, and whose CSRF token and decision must
// not travel). A scope asked for is given as granted: the same grant, and
// bounded (one scope may be repeated without end), so that the longest
// request fits in safeNext's limit.
func authorizeNext(r oauth.AuthorizeRequest, scope string) string {
	q := url.Values{}
	for k, v := range authorizeParams(r) {
		if v != "" {
			q.Set(k, v)
		}
	}
	if q.Has("scope") {
		q.Set("scope", scope)
	}
	return "/oauth/authorize?" + q.Encode()
}

// authorize answers GET and POST /oauth/authorize. An unknown client or a
// redirect URI it did not register is shown on a page of ours, never
// redirected (RFC 6749 §4.1.2.1); so are malformed requests (no PKCE, a
// wrong response type). What a verified client asked for and may not have
// (a scope, a resource) goes back to its redirect URI as invalid_scope or
// invalid_target, for the client to fix, by a link on the error page the
// person follows (an automatic redirect would make this an open
// redirector: registration is open, RFC 9700 §4.11.2). The person's
// refusal on the consent form (POST, with the session's CSRF token) is
// redirected. A signed-out person
// signs in first and comes back; a signed-in one is asked to consent (GET).
func (s *Server) authorize(c *gin.Context) {
	get := c.Query
	if c.Request.Method == http.MethodPost {
		get = c.PostForm
	}
	r := authorizeRequest(get)
	ctx := c.Request.Context()
	var scope string
	client, err := s.svc.OAuth.CheckClient(ctx, r)
	if err == nil {
		scope, err = s.svc.OAuth.CheckRequest(r)
	}
	if err == nil && len(c.QueryArray("resource"))+len(c.PostFormArray("resource")) > 1 {
		err = &oauth.Error{Code: "invalid_target", Description: "ask for one resource at a time"}
	}
	if err != nil {
		var oe *oauth.Error
		if !errors.As(err, &oe) {
			s.resp.Error(c, err)
			return
		}
		view := gin.H{"Title": "Sign-in link error", "Message": oe.Description, "Code": oe.Code}
		if client.ID != "" && (oe.Code == "invalid_scope" || oe.Code == "invalid_target") {
			// What a verified client asked for goes back to it to fix
			// (RFC 6749 §4.1.2.1), through the person: registration is
			// open, so an automatic redirect would make this an open
			// redirector (RFC 9700 §4.11.2).
			back, _ := url.Parse(r.RedirectURI)
			view["ReturnHost"], view["ReturnURL"] = back.Host, s.returnURL(r, url.Values{"error": {oe.Code}, "error_description": {oe.Description}})
		}
		s.render(c, http.StatusBadRequest, "oauth_error.html", view)
		return
	}
	u, signedIn := currentUser(c)
	if !signedIn {
		c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(authorizeNext(r, scope)))
		return
	}
	if c.Request.Method == http.MethodGet {
		var scopes []string
		for _, sc := range strings.Fields(scope) {
			scopes = append(scopes, scopeDescriptions[sc])
		}
		redirect, _ := url.Parse(r.RedirectURI)
		c.Set(formActionCtxKey, redirect.Scheme+"://"+redirect.Host) // the answer ends there
		s.render(c, http.StatusOK, "consent.html", gin.H{
			"Title": "Allow access", "ClientName": client.Name, "Scopes": scopes, "Email": u.Email,
			"RedirectHost": redirect.Host, "CSRF": s.csrfToken(c), "Params": authorizeParams(r),
		})
		return
	}
	if !s.validCSRF(c) {
		s.resp.Error(c, errBadCSRF)
		return
	}
	if c.PostForm("decision") != "approve" {
		s.redirectBack(c, r, url.Values{"error": {"access_denied"}, "error_description": {"the user denied access"}})
		return
	}
	code, err := s.svc.OAuth.IssueCode(ctx, r, u.ID, scope)
	if err != nil {
		s.resp.Error(c, err)
		return
	}
	s.redirectBack(c, r, url.Values{"code": {code}})
}

// redirectBack sends the browser to the client's (verified) redirect URI
// with params and the request's state added to its query. It answers the
// consent form's POST, so with 303 See Other: the only status that makes
// every browser follow with a GET, leaving the form, the session's CSRF
// token in it, behind (RFC 9700 §4.12; a 307 would post it to the client).
func (s *Server) redirectBack(c *gin.Context, r oauth.AuthorizeRequest, params url.Values) {
	c.Header("Cache-Control", "no-store")
	c.Redirect(http.StatusSeeOther, s.returnURL(r, params))
}

// returnURL is the client's (verified) redirect URI with params, the
// request's state and the issuer added to its query.
func (s *Server) returnURL(r oauth.AuthorizeRequest, params url.Values) string {
	u, _ := url.Parse(r.RedirectURI) // verified by CheckClient
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if r.State != "" {
		q.Set("state", r.State)
	}
	q.Set("iss", s.base()) // RFC 9207: which server answered
	u.RawQuery = q.Encode()
	return u.String()
}

// token answers POST /api/oauth/token (form-encoded, RFC 6749 §3.2).
func (s *Server) token(c *gin.Context) {
	if !s.formEncoded(c, "token request") {
		return
	}
	ctx := c.Request.Context()
	var (
		t   oauth.Tokens
		err error
	)
	if len(c.PostFormArray("resource")) > 1 {
		s.writeOAuthError(c, &oauth.Error{Code: "invalid_target", Description: "ask for one resource at a time"})
		return
	}
	clientID, err := tokenClientID(c)
	if err != nil {
		s.writeOAuthError(c, err)
		return
	}
	switch gt := c.PostForm("grant_type"); gt {
	case "authorization_code":
		t, err = s.svc.OAuth.ExchangeCode(ctx, clientID, c.PostForm("code"), c.PostForm("redirect_uri"), c.PostForm("code_verifier"), c.PostForm("resource"))
	case "refresh_token":
		t, err = s.svc.OAuth.Refresh(ctx, clientID, c.PostForm("refresh_token"), c.PostForm("scope"), c.PostForm("resource"))
	case "":
		err = &oauth.Error{Code: "invalid_request", Description: "grant_type is required"}
	default:
		err = &oauth.Error{Code: "unsupported_grant_type", Description: fmt.Sprintf("grant_type %q is not supported; use authorization_code or refresh_token", gt)}
	}
	if err != nil {
		s.writeOAuthError(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.Header("Pragma", "no-cache")
	c.JSON(http.StatusOK, t)
}

// formEncoded reports whether c's body is a form, as the token and
// revocation endpoints take them (RFC 6749 §3.2, RFC 7009 §2.1), and
// answers invalid_request, naming what (the kind of request), when not.
func (s *Server) formEncoded(c *gin.Context, what string) bool {
	if strings.EqualFold(c.ContentType(), "application/x-www-form-urlencoded") { // media types ignore case
		return true
	}
	s.writeOAuthError(c, &oauth.Error{Code: "invalid_request", Description: "send the " + what + " form-encoded (application/x-www-form-urlencoded)"})
	return false
}

// tokenClientID is the client of a token or revocation request:
// client_id in the form, or the user name of HTTP Basic authentication
// (RFC 6749 §2.3.1, as golang.org/x/oauth2 sends it), with an empty
// password: the clients are public, so a secret is refused as
// invalid_client. Both, naming two clients, are an invalid_request.
func tokenClientID(c *gin.Context) (string, error) {
	form := c.PostForm("client_id")
	if _, ok := c.Request.Header["Authorization"]; !ok {
		return form, nil
	}
	user, pass, ok := c.Request.BasicAuth()
	if !ok {
		return "", &oauth.Error{Code: "invalid_client", Description: "the Authorization header must be HTTP Basic with the client_id as the user name"}
	}
	id, err := url.QueryUnescape(user) // form-encoded before base64 (§2.3.1)
	if err != nil || id == "" {
		return "", &oauth.Error{Code: "invalid_client", Description: "the Basic user name must be the client_id"}
	}
	if pass != "" {
		return "", &oauth.Error{Code: "invalid_client", Description: "the clients are public: send no client secret"}
	}
	if form != "" && form != id {
		return "", &oauth.Error{Code: "invalid_request", Description: "client_id in the form and in the Authorization header differ"}
	}
	return id, nil
}

// revoke answers POST /api/oauth/revoke (RFC 7009), for the client named
// as at the token endpoint (tokenClientID): 200 whether or not the token
// was known, live or expired; invalid_client for another client's token
// (oauth.Server.Revoke).
func (s *Server) revoke(c *gin.Context) {
	if !s.formEncoded(c, "revocation request") {
		return
	}
	clientID, err := tokenClientID(c)
	if err == nil {
		err = s.svc.OAuth.Revoke(c.Request.Context(), c.PostForm("token"), clientID)
	}
	if err != nil {
		s.writeOAuthError(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.Status(http.StatusOK)
}
