package api

import (
	"encoding/json"
	"strings"
	"testing"

	pagepkg "github.com/domaind/domaind/dashboard/page"
)

func TestHomePageLinksTheReference(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	w := env.request("GET", "/", "")
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET / = %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	page := w.Body.String()
	for _, link := range []string{"/docs", "/openapi.json", "/login", "/ops", "/healthz", "/readyz"} {
		if !strings.Contains(page, `href="`+link+`"`) {
			t.Errorf("the front page does not link %s", link)
		}
	}
	// The queue dashboard is linked where this process serves it (`all`),
	// and named as the dashboard role's where it does not (`api`).
	if strings.Contains(page, `href="/monitoring/"`) || !strings.Contains(page, "the <code>dashboard</code> role serves it") {
		t.Errorf("an api role's front page links a dashboard it does not serve")
	}
	withDashboard(t, env)
	if page := env.request("GET", "/", "").Body.String(); !strings.Contains(page, `href="/monitoring/"`) {
		t.Errorf("the front page of a process serving the dashboard does not link it")
	}
	if !strings.Contains(page, "http://api.test/api/pricing/tld") {
		t.Errorf("the front page's example is not on the base URL")
	}
	// Its one script is this site's file, the only kind its policy runs.
	if strings.Count(strings.ToLower(page), "<script") != 1 || !strings.Contains(page, `<script src="/assets/search.js" defer></script>`) ||
		w.Header().Get("Content-Security-Policy") != pagepkg.ScriptPolicy {
		t.Errorf("the front page's scripts: %d, policy %q", strings.Count(page, "<script"), w.Header().Get("Content-Security-Policy"))
	}
}

func TestReferenceIsServed(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	w := env.request("GET", "/openapi.json", "")
	var doc struct {
		Info    struct{ Version string }
		Servers []struct{ URL string }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || w.Code != 200 {
		t.Fatalf("openapi.json = %d: %v", w.Code, err)
	}
	if doc.Info.Version != "1.2.0" || len(doc.Servers) == 0 || doc.Servers[0].URL != "http://api.test" {
		t.Errorf("openapi.json: version %q, servers %+v; want 1.2.0 on http://api.test", doc.Info.Version, doc.Servers)
	}
	if w := env.request("GET", "/openapi.yaml", ""); w.Code != 200 || !strings.HasPrefix(w.Body.String(), "openapi: 3.1.0") {
		t.Errorf("openapi.yaml = %d %.40q", w.Code, w.Body)
	}
	w = env.request("GET", "/docs", "")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `href="/docs/docs.css"`) || !strings.Contains(w.Body.String(), `id="op-searchDomains"`) {
		t.Errorf("docs = %d, without its stylesheet or the search", w.Code)
	}
	if w := env.request("GET", "/docs/docs.css", ""); w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/css") {
		t.Errorf("docs.css = %d %q", w.Code, w.Header().Get("Content-Type"))
	}
}

// TestRouterAnswers checks the answers the router gives without an
// operation (no route, another method, a trailing slash) against the
// document, through the funnel every test uses.
func TestRouterAnswers(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	tests := []struct {
		method, path string
		want         int
	}{
		{"GET", "/nope", 404},
		{"HEAD", "/healthz", 200},      // as its GET
		{"OPTIONS", "/api/batch", 204}, // a CORS preflight
		{"OPTIONS", "/api/auth/me", 405},
		{"GET", "/docs/", 301},
		{"POST", "/api/batch/", 307},
	}
	for _, tc := range tests {
		if w := env.request(tc.method, tc.path, ""); w.Code != tc.want {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, w.Code, tc.want)
		}
	}
}
