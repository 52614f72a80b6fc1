package api

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/pb33f/libopenapi"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/api/openapi"
	"github.com/domaind/domaind/api/openapi/openapitest"
)

// notInDocument are the paths the OpenAPI document leaves out, and why.
// Requests under them are not checked against it.
var notInDocument = []struct{ prefix, why string }{
	{"/monitoring", "the asynqmon dashboard: a mounted application with routes of its own"},
	{"/test/", "routes that tests add to the engine to exercise middleware"},
	{"/bench/", "routes that benchmarks add to the engine"},
}

func undocumented(path string) bool {
	path = openapitest.CleanPath(path)
	return slices.ContainsFunc(notInDocument, func(n struct{ prefix, why string }) bool {
		return path == strings.TrimSuffix(n.prefix, "/") || strings.HasPrefix(path, n.prefix)
	})
}

// snapshot copies r and its body for the OpenAPI check before the engine
// serves it (the router may rewrite the request's path), and puts the body
// back for the engine.
func snapshot(tb testing.TB, r *http.Request) (*http.Request, []byte) {
	tb.Helper()
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			tb.Fatalf("read request body: %v", err)
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	return r.Clone(r.Context()), body
}

// checkOpenAPI fails the test when the exchange does not fit the OpenAPI
// document (see package openapitest for the rules). Benchmarks are not
// checked, so that their figures measure the service alone.
func (env *testEnv) checkOpenAPI(r *http.Request, reqBody []byte, status int, header http.Header, body []byte) {
	tb := env.tb
	tb.Helper()
	if _, bench := tb.(*testing.B); bench || undocumented(r.URL.Path) || env.batchReachesTestRoutes(r) {
		return
	}
	c, err := openapitest.Default()
	if err != nil {
		tb.Fatalf("OpenAPI checker: %v", err)
	}
	for _, p := range c.Check(openapitest.Exchange{Request: r, RequestBody: reqBody, Status: status, Header: header, Body: body}) {
		tb.Errorf("OpenAPI: %s", p)
	}
}

// batchReachesTestRoutes reports whether r is a batch sent to an engine on
// which a test mounted routes of its own. The batch's operations can reach
// them (through a path trick in a parameter, as a test does on purpose),
// and the answers of test routes, in the batch's results, are not the
// document's to describe.
func (env *testEnv) batchReachesTestRoutes(r *http.Request) bool {
	if r.Method != http.MethodPost || openapitest.CleanPath(r.URL.Path) != "/api/batch" {
		return false
	}
	return slices.ContainsFunc(env.srv.engine.Routes(), func(ri gin.RouteInfo) bool {
		return undocumented(ri.Path) && !strings.HasPrefix(ri.Path, "/monitoring")
	})
}

// checkedHandler is the server as tests that need a real HTTP server (the
// browser) see it: each response is buffered, checked against the
// OpenAPI document, and only then sent; not the 499 of a client that left
// (a browser drops the first send of a double click), which nobody
// receives.
func (env *testEnv) checkedHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent, body := snapshot(env.tb, r)
		rec := httptest.NewRecorder()
		env.srv.ServeHTTP(rec, r)
		if rec.Code != httpjson.StatusClientClosed || r.Context().Err() == nil {
			env.checkOpenAPI(sent, body, rec.Code, rec.Header(), rec.Body.Bytes())
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// ginParam matches a gin path parameter (":id") or wildcard ("*path").
var ginParam = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)

// templated writes a path's parameters as "{}", so that gin's ":op" and
// the document's "{op}" compare equal whatever their names.
func templated(path string) string {
	path = ginParam.ReplaceAllString(path, "{$1}")
	return regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, "{}")
}

// documentedOperations are the document's operations by method and
// templated path ("GET /api/tlds/{}/metadata").
func documentedOperations(t *testing.T) map[string]*v3.Operation {
	t.Helper()
	doc, err := libopenapi.NewDocument(openapi.Spec())
	if err != nil {
		t.Fatal(err)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]*v3.Operation{}
	for path, item := range m.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			ops[strings.ToUpper(method)+" "+templated(path)] = op
		}
	}
	return ops
}

// TestEveryRouteIsDocumented checks that the router and the OpenAPI
// document list the same operations.
func TestEveryRouteIsDocumented(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.deps.Monitoring = http.NotFoundHandler()
	srv := New(env.deps)

	routes := map[string]bool{}
	var preflights []string
	for _, r := range srv.engine.Routes() {
		if undocumented(r.Path) {
			continue
		}
		if r.Method == http.MethodOptions { // CORS preflights: the document's Preflight response, for the paths below
			preflights = append(preflights, templated(r.Path))
			continue
		}
		routes[r.Method+" "+templated(r.Path)] = true
	}
	documented := map[string]bool{}
	for op := range documentedOperations(t) {
		documented[op] = true
	}
	if len(routes) < 40 {
		t.Fatalf("only %d routes found; is the router built?", len(routes))
	}
	for r := range routes {
		if !documented[r] {
			t.Errorf("route %s is not in the OpenAPI document", r)
		}
	}
	for d := range documented {
		if !routes[d] {
			t.Errorf("the OpenAPI document has %s, which no route serves", d)
		}
	}
	for _, p := range preflights {
		if !documented["GET "+p] && !documented["POST "+p] {
			t.Errorf("preflight OPTIONS %s answers for a path the document does not have", p)
		}
	}
}

// TestOpenAPICheckCatchesMismatches makes sure the check can fail: an
// undocumented field, an undocumented status and an undocumented route.
func TestOpenAPICheckCatchesMismatches(t *testing.T) {
	c, err := openapitest.Default()
	if err != nil {
		t.Fatal(err)
	}
	json := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "X-Request-Id": {"abc"}}
	tests := []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		want               string
	}{
		{"a field the schema does not list", "GET", "/healthz", 200, json, `{"status":"ok","extra":1}`, "extra"},
		{"a status the operation does not list", "GET", "/healthz", 418, json, `{"status":"ok"}`, "418"},
		{"a missing required header", "GET", "/healthz", 200, http.Header{"Content-Type": {"application/json"}}, `{"status":"ok"}`, "X-Request-Id"},
		{"a path the document does not have", "GET", "/nowhere", 200, json, `{}`, "no operation"},
		{"a 404 not in the error shape", "GET", "/nowhere", 404, json, `{"error":"gone"}`, "NoRoute"},
		{"a 405 without Allow", "DELETE", "/healthz", 405, json, `{"error":{"code":"method_not_allowed","message":"no"}}`, "Allow"},
		{"a redirect without Location", "GET", "/docs/", 301, http.Header{"Content-Type": {"text/html"}}, `<a href="/docs">Moved</a>`, "Location"},
		{"a bad stream line", "POST", "/api/domain/search", 200,
			http.Header{"Content-Type": {"application/x-ndjson"}, "X-Request-Id": {"abc"}, "Ratelimit-Limit": {"60"},
				"Ratelimit-Remaining": {"59"}, "Ratelimit-Reset": {"1"}, "Ratelimit-Policy": {"60;w=60"}},
			`{"kind":"header","request_id":"abc","primary":"a.com","domains":["a.com"],"primary_index":0}` + "\n" + `{"kind":"nope"}` + "\n", "$[1]"},
		{"a request without the operation's credentials, answered 2xx", "POST", "/api/auth/logout", 204,
			http.Header{"X-Request-Id": {"abc"}, "Set-Cookie": {"domaind_session=; Max-Age=0"}}, ``, "→ 204: request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(`{"unknown":true}`))
			r.Header.Set("Content-Type", "application/json")
			problems := c.Check(openapitest.Exchange{Request: r, RequestBody: []byte(`{"unknown":true}`), Status: tc.status, Header: tc.header, Body: []byte(tc.body)})
			if len(problems) == 0 {
				t.Fatalf("no problem found; want one about %q", tc.want)
			}
			joined := strings.Join(problems, "\n")
			if !strings.Contains(joined, tc.want) {
				t.Errorf("problems %q do not mention %q", joined, tc.want)
			}
			t.Log(joined)
		})
	}
}
