package openapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/domaind/domaind/api/openapi/docsgen"
	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"
)

// TestDocumentIsValidOpenAPI31 checks the embedded document against the
// OpenAPI 3.1 schema with the validator library, and its version.
func TestDocumentIsValidOpenAPI31(t *testing.T) {
	doc, err := libopenapi.NewDocument(Spec())
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if got := doc.GetVersion(); got != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", got)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("build validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("document: %s: %s (line %d)", e.Message, e.Reason, e.SpecLine)
			for _, f := range e.SchemaValidationErrors {
				t.Errorf("    at line %d, %s: %s", f.Line, f.KeywordLocation, f.Reason)
			}
		}
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("build model: %v", err)
	}
	if got := m.Model.Info.Version; got != "1.2.0" {
		t.Errorf("info.version = %q, want 1.2.0", got)
	}
}

// TestServedDocumentUsesTheBaseURL checks that both forms carry the
// deployment's base URL and say the same thing.
func TestServedDocumentUsesTheBaseURL(t *testing.T) {
	h, err := New("https://domains.example/")
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeJSON(w, httptest.NewRequest("GET", "/openapi.json", nil))
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("openapi.json = %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	var fromJSON map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &fromJSON); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	servers := fromJSON["servers"].([]any)
	if got := servers[0].(map[string]any)["url"]; got != "https://domains.example" {
		t.Errorf("servers[0].url = %v, want the base URL", got)
	}
	if strings.Contains(w.Body.String(), DefaultBaseURL) {
		t.Errorf("openapi.json still names %s", DefaultBaseURL)
	}
	if !strings.Contains(w.Body.String(), `"authorizationUrl":"https://domains.example/oauth/authorize"`) {
		t.Errorf("the OAuth flow's authorizationUrl is not on the base URL")
	}
	if !strings.HasPrefix(w.Body.String(), `{"openapi":"3.1.0","info":{`) {
		t.Errorf("openapi.json does not keep the document's key order: %.40s", w.Body.String())
	}

	w = httptest.NewRecorder()
	h.ServeYAML(w, httptest.NewRequest("GET", "/openapi.yaml", nil))
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/yaml" {
		t.Fatalf("openapi.yaml = %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	doc, err := libopenapi.NewDocument(w.Body.Bytes())
	if err != nil {
		t.Fatalf("served YAML: %v", err)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("served YAML: %v", err)
	}
	if got := m.Model.Servers[0].URL; got != "https://domains.example" {
		t.Errorf("YAML servers[0].url = %q", got)
	}
	var fromYAML map[string]any
	yj, err := docsgen.NodeJSON(mustNode(t, w.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(yj, &fromYAML); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fromJSON)
	b, _ := json.Marshal(fromYAML)
	if string(a) != string(b) {
		t.Errorf("openapi.yaml and openapi.json differ: run go generate ./api/openapi")
	}
}

// TestDocsPage renders the reference and checks that every operation and
// every schema is on it, with the stylesheet and no script.
func TestDocsPage(t *testing.T) {
	h, err := New("http://api.test")
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeDocs(w, httptest.NewRequest("GET", "/docs", nil))
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("docs = %d %q %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("docs CSP = %q, want nothing loaded but the stylesheet, and no framing", csp)
	}
	page := w.Body.String()
	m := specModel(t)
	for path, item := range m.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			if !strings.Contains(page, `id="op-`+op.OperationId+`"`) {
				t.Errorf("%s %s (%s) is not on the page", strings.ToUpper(method), path, op.OperationId)
			}
		}
	}
	for name := range m.Model.Components.Schemas.KeysFromOldest() {
		if !strings.Contains(page, `id="schema-`+name+`"`) {
			t.Errorf("schema %s is not on the page", name)
		}
	}
	for _, want := range []string{
		`<link rel="stylesheet" href="/docs/docs.css">`,
		`<code>http://api.test</code>`,
		`<a href="#schema-SearchStream">SearchStream</a>`, // a link to a named schema
		`<td><code>error.code</code>`,                     // a nested field, flattened
		`{&#34;kind&#34;:&#34;primary_done&#34;}` + "\n",  // the stream's example, a line per event
		`<h4>Headers on every response</h4>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(strings.ToLower(page), "<script") {
		t.Error("the page has a script")
	}
	if strings.Contains(page, `<td><code>X-Request-Id</code> <span class="req">always</span>`) {
		t.Error("X-Request-Id, on every response, is repeated in the responses' header tables")
	}
	w = httptest.NewRecorder()
	h.ServeCSS(w, httptest.NewRequest("GET", "/docs/docs.css", nil))
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/css") || !strings.Contains(w.Body.String(), ".op") {
		t.Errorf("docs.css = %d %q", w.Code, w.Header().Get("Content-Type"))
	}
}

func TestServeSetsNoSniff(t *testing.T) {
	h := Must(New(DefaultBaseURL))
	w := httptest.NewRecorder()
	h.ServeYAML(w, httptest.NewRequest(http.MethodGet, "/openapi.yaml", nil))
	if w.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("X-Content-Type-Options = %q", w.Header().Get("X-Content-Type-Options"))
	}
}

func mustNode(t *testing.T, b []byte) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

// TestExamplesFitTheirSchemas keeps the examples of the reference true:
// every media type's example must validate against its schema.
func TestExamplesFitTheirSchemas(t *testing.T) {
	m := specModel(t)
	sv := schema_validation.NewSchemaValidator(config.WithFormatAssertions())
	check := func(where string, content *orderedmap.Map[string, *v3.MediaType]) {
		for mt, media := range content.FromOldest() {
			if media.Example == nil || media.Schema == nil || !strings.HasSuffix(mt, "json") {
				continue
			}
			ex, err := docsgen.NodeJSON(media.Example)
			if err != nil {
				t.Fatalf("%s %s: %v", where, mt, err)
			}
			if ok, errs := sv.ValidateSchemaBytes(media.Schema.Schema(), ex); !ok {
				for _, e := range errs {
					for _, f := range e.SchemaValidationErrors {
						t.Errorf("%s %s: example: %s at %s", where, mt, f.Reason, f.FieldPath)
					}
				}
			}
		}
	}
	n := 0
	for path, item := range m.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			where := strings.ToUpper(method) + " " + path
			if op.RequestBody != nil {
				check(where+" request", op.RequestBody.Content)
				n += orderedmap.Len(op.RequestBody.Content)
			}
			for code, r := range op.Responses.Codes.FromOldest() {
				check(where+" "+code, r.Content)
			}
		}
	}
	for name, r := range m.Model.Components.Responses.FromOldest() {
		check("components/responses/"+name, r.Content)
	}
	if n == 0 {
		t.Fatal("no request bodies found")
	}
}

// A base URL the documents would have to escape is refused rather than
// written into them.
func TestNewRefusesABaseURLThatNeedsEscaping(t *testing.T) {
	for _, base := range []string{`https://domains.example/"x"`, "https://domains.example/<b>", "https://domains.example/a b", "javascript:alert(1)"} {
		if _, err := New(base); err == nil {
			t.Errorf("New(%q) took it", base)
		}
	}
	if _, err := New("http://[::1]:9090/registry/"); err != nil {
		t.Errorf("New(an IPv6 base with a path) = %v", err)
	}
}

// Every operation says who may call it (security: [] for public ones, as
// linters ask), and every one of the service's that takes a body documents
// the 413 of the body limit.
func TestEveryOperationDeclaresSecurityAndTheBodyLimit(t *testing.T) {
	m := specModel(t)
	check := func(where string, item *v3.PathItem, ours bool) {
		for method, op := range item.GetOperations().FromOldest() {
			if op.Security == nil {
				t.Errorf("%s %s declares no security (security: [] for a public operation)", method, where)
			}
			if ours && (method == "post" || method == "put" || method == "patch") {
				if _, ok := op.Responses.Codes.Get("413"); !ok {
					t.Errorf("%s %s has no 413", method, where)
				}
			}
		}
	}
	for path, item := range m.Model.Paths.PathItems.FromOldest() {
		check(path, item, true)
	}
	for name, item := range m.Model.Webhooks.FromOldest() {
		check("webhook "+name, item, false) // a request to the partner's endpoint
	}
}

// specModel is the document served, as libopenapi's model.
func specModel(t *testing.T) *libopenapi.DocumentModel[v3.Document] {
	t.Helper()
	doc, err := libopenapi.NewDocument(Spec())
	if err != nil {
		t.Fatal(err)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	return m
}
