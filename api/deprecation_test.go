package api

import (
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
)

func TestDeprecatedOperationsAnnounceThemselves(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	since := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	env.srv.deprecations["GET /test/old"] = httpjson.Deprecation{
		Since: since, Sunset: since.AddDate(0, 6, 0),
		Link: "https://domaind.example/docs/migrate-old", SunsetLink: "https://domaind.example/changelog#old",
	}
	env.srv.engine.GET("/test/old", func(c *gin.Context) { c.String(200, "old") })
	env.srv.engine.GET("/test/new", func(c *gin.Context) { c.String(200, "new") })

	w := env.request("GET", "/test/old", "")
	if got := w.Header().Get("Deprecation"); got != "@1796083200" {
		t.Errorf("Deprecation = %q, want @1796083200 (RFC 9745: @ and Unix seconds)", got)
	}
	if got := w.Header().Get("Sunset"); got != "Tue, 01 Jun 2027 00:00:00 GMT" {
		t.Errorf("Sunset = %q, want an HTTP-date (RFC 8594)", got)
	}
	links := strings.Join(w.Header().Values("Link"), ", ")
	if !strings.Contains(links, `<https://domaind.example/docs/migrate-old>; rel="deprecation"`) ||
		!strings.Contains(links, `<https://domaind.example/changelog#old>; rel="sunset"`) {
		t.Errorf("Link = %q", links)
	}
	w = env.request("GET", "/test/new", "")
	for _, h := range []string{"Deprecation", "Sunset", "Link"} {
		if v := w.Header().Get(h); v != "" {
			t.Errorf("an operation in good standing sends %s: %q", h, v)
		}
	}
}

// SPEC §8: an operation is announced at least 90 days before it goes.
func TestDeprecationsGiveNinetyDaysNotice(t *testing.T) {
	for route, d := range deprecations {
		if err := d.Check(); err != nil {
			t.Errorf("%s: %v", route, err)
		}
	}
}

// The document marks deprecated exactly the operations the route table does.
func TestDocumentMarksTheDeprecatedOperations(t *testing.T) {
	marked := map[string]bool{}
	for key, op := range documentedOperations(t) {
		if op.Deprecated != nil && *op.Deprecated {
			marked[key] = true
		}
	}
	routes := map[string]bool{}
	for route := range deprecations {
		method, path, _ := strings.Cut(route, " ")
		routes[method+" "+templated(path)] = true
	}
	for r := range routes {
		if !marked[r] {
			t.Errorf("%s is deprecated in the route table but not in the OpenAPI document", r)
		}
	}
	for r := range marked {
		if !routes[r] {
			t.Errorf("the OpenAPI document marks %s deprecated; the route table does not", r)
		}
	}
}
