package api

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// Browser pages on other sites may call the public endpoints (no cookies);
// the cookie-authenticated ones stay our own pages'.
func TestCORSOnThePublicSurfaceOnly(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	preflight := func(path, method string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("OPTIONS", path, nil)
		r.Header.Set("Origin", "https://app.example")
		r.Header.Set("Access-Control-Request-Method", method)
		r.Header.Set("Access-Control-Request-Headers", "content-type, authorization, idempotency-key")
		return env.do(r)
	}
	for _, tc := range []struct{ path, method string }{
		{"/api/domain/search", "POST"}, {"/api/tools/whois", "POST"}, {"/api/market/listings", "GET"},
		{"/api/pricing/tld", "GET"}, {"/api/tlds/com/metadata", "GET"}, {"/api/batch", "POST"},
		{"/api/tools/dns-lookup", "POST"}, {"/api/oauth/token", "POST"}, {"/.well-known/oauth-authorization-server", "GET"},
	} {
		w := preflight(tc.path, tc.method)
		allowed := w.Header().Get("Access-Control-Allow-Headers")
		if w.Code != 204 || w.Header().Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(w.Header().Get("Access-Control-Allow-Methods"), tc.method) ||
			!strings.Contains(allowed, "Authorization") || !strings.Contains(allowed, "Idempotency-Key") {
			t.Errorf("preflight of %s %s = %d %v", tc.method, tc.path, w.Code, w.Header())
		}
		if w.Header().Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("%s allows credentials", tc.path)
		}
	}
	w := env.request("GET", "/api/pricing/tld?tld=com", "", "Origin", "https://app.example")
	if w.Header().Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(w.Header().Get("Access-Control-Expose-Headers"), "RateLimit-Remaining") {
		t.Errorf("pricing answer CORS headers = %v", w.Header())
	}
	if w := env.request("GET", "/api/pricing/tld?tld=com", ""); w.Code != 200 || w.Header().Get("Access-Control-Allow-Origin") != "" || w.Header().Get("Vary") != "Origin" {
		t.Errorf("pricing answer without an Origin = %d %v, want no CORS headers and Vary: Origin", w.Code, w.Header())
	}
	for _, tc := range []struct{ path, method string }{{"/api/auth/me", "GET"}, {"/api/v1/keys", "POST"}, {"/api/domains/bulk/lock", "POST"}, {"/api/ops/canaries", "POST"}} {
		if w := preflight(tc.path, tc.method); w.Header().Get("Access-Control-Allow-Origin") != "" || w.Code == 204 {
			t.Errorf("preflight of cookie route %s = %d with %q, want no CORS", tc.path, w.Code, w.Header().Get("Access-Control-Allow-Origin"))
		}
	}
	if w := env.request("GET", "/api/auth/me", "", "Origin", "https://app.example"); w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a cookie route answers with CORS headers")
	}
}

// HEAD works wherever GET does: the GET's status and headers, no body.
func TestHeadWhereGet(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	for _, path := range []string{"/api/pricing/tld?tld=com", "/api/tlds/com/metadata", "/api/market/listings", "/healthz", "/api/batch", "/login"} {
		get := env.request("GET", path, "")
		head := env.request("HEAD", path, "")
		if head.Code != get.Code || head.Body.Len() != 0 || head.Header().Get("Content-Type") != get.Header().Get("Content-Type") {
			t.Errorf("HEAD %s = %d (%d bytes, %q), GET = %d %q", path, head.Code, head.Body.Len(), head.Header().Get("Content-Type"), get.Code, get.Header().Get("Content-Type"))
		}
	}
	if w := env.request("HEAD", "/api/domain/search", ""); w.Code != 405 {
		t.Errorf("HEAD of a POST-only route = %d, want 405", w.Code)
	}
}
