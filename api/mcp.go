package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	mcpapi "github.com/domaind/domaind/api/mcp"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/oauth"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/tools"
)

// mountMCP serves the MCP server (api/mcp) at /mcp, with its
// protected-resource metadata: its tools call what the HTTP API calls,
// and spend the same limits, per user.
func (s *Server) mountMCP(e *gin.Engine) {
	limits := map[string]ratelimit.Policy{mcpapi.ToolPricing: pricingLimit, mcpapi.ToolRequirements: pricingLimit,
		mcpapi.ToolWhois: whoisQuota, mcpapi.ToolListings: listingsLimit, mcpapi.ToolSearch: searchLimit}
	if t, ok := s.tools.Get(tools.SuggestSlug); ok {
		limits[mcpapi.ToolSuggest] = toolPolicy(t)
	}
	h := mcpapi.Handler(mcpapi.Deps{
		Verify:              s.verifyForMCP,
		ResourceMetadataURL: s.base() + "/.well-known/oauth-protected-resource" + mcpapi.Path,
		Catalog:             s.svc.Catalog,
		Whois:               s.svc.Whois,
		Market:              s.svc.Market,
		Search:              s.svc.Search,
		Tools:               s.svc.Inline,
		Limiter:             s.svc.Limiter,
		Limits:              limits,
		GiveBack: func(ctx context.Context, p ratelimit.Policy, client string, r ratelimit.Result) {
			s.giveBackQuota(ctx, p, client, r, false)
		},
		Version: "1", Log: s.log, Now: s.now,
	})
	serve := func(c *gin.Context) {
		r := c.Request.WithContext(mcpapi.WithAddress(c.Request.Context(), httpjson.Client(c)))
		h.ServeHTTP(&refusalWriter{ResponseWriter: c.Writer, c: c}, r)
	}
	e.POST(mcpapi.Path, serve) // stateless: no session to GET or DELETE
	e.GET("/.well-known/oauth-protected-resource"+mcpapi.Path, s.protectedResourceMetadata(mcpapi.Path, "domaind MCP server"))
}

// verifyForMCP checks an access token for /mcp: one bound to the MCP
// server, to the service as a whole, or to no resource.
func (s *Server) verifyForMCP(ctx context.Context, token string) (mcpapi.Grant, error) {
	t, err := s.svc.OAuth.Authenticate(ctx, token, s.base(), s.base()+mcpapi.Path)
	if err != nil {
		if errors.Is(err, oauth.ErrInvalidToken) {
			return mcpapi.Grant{}, mcpapi.ErrInvalidToken
		}
		// The SDK answers the error's text; what went wrong is logged.
		s.log.ErrorContext(ctx, "mcp: token not checked", "err", err)
		return mcpapi.Grant{}, errors.New("internal error")
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
	if code == http.StatusUnauthorized && w.c.GetHeader("Authorization") != "" {
		// The SDK's challenge names the metadata but not why a token that
		// was sent is refused (RFC 6750 §3.1), as /api's does.
		if v := w.Header().Get("WWW-Authenticate"); v != "" && !strings.Contains(v, "error=") {
			w.Header().Set("WWW-Authenticate", v+`, error="invalid_token"`)
		}
	}
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
		case w.status >= 500: // nothing internal in the body, as everywhere
			code, msg = fault.Internal, "internal error"
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
	http.StatusRequestEntityTooLarge: fault.PayloadTooLarge, http.StatusUnsupportedMediaType: fault.UnsupportedMedia,
}
