package docsgen

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/pb33f/go-yaml"

	"github.com/domaind/domaind/api/openapi"
)

// The document served is the one written, completed today: openapi.gen.yaml
// is not stale.
func TestServedDocumentIsTheWrittenOneCompleted(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Complete(src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(openapi.Spec(), want) {
		t.Fatal("openapi.gen.yaml is not openapi.yaml completed: run go generate ./api/openapi")
	}
}

// Complete gives every operation that takes a body a 413 in the shape of
// its errors, keeps one an operation lists itself, keeps the statuses in
// order, and leaves operations without a body alone.
func TestCompleteAddsTheMiddlewaresAnswers(t *testing.T) {
	t.Parallel()
	src := `openapi: 3.1.0
paths:
  /a:
    get:
      responses:
        '200': {description: ok}
    post:
      responses:
        '200': {description: ok}
        '429': {description: slow down}
  /oauth:
    post:
      responses:
        '400': {$ref: '#/components/responses/OAuthBadRequest'}
  /own:
    put:
      responses:
        '413': {description: its own}
`
	out, err := Complete([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Responses yaml.Node `yaml:"responses"`
		} `yaml:"paths"`
	}
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	statuses := func(path, method string) (keys []string, ref413 string) {
		n := doc.Paths[path][method].Responses
		for i := 0; i+1 < len(n.Content); i += 2 {
			keys = append(keys, n.Content[i].Value)
			if n.Content[i].Value == "413" {
				if r := lookup(n.Content[i+1], "$ref"); r != nil {
					ref413 = r.Value
				} else {
					ref413 = "inline"
				}
			}
		}
		return keys, ref413
	}
	for _, tc := range []struct{ path, method, keys, ref string }{
		{"/a", "get", "200", ""},
		{"/a", "post", "200 413 429", "#/components/responses/PayloadTooLarge"},
		{"/oauth", "post", "400 413", "#/components/responses/OAuthPayloadTooLarge"},
		{"/own", "put", "413", "inline"},
	} {
		keys, ref := statuses(tc.path, tc.method)
		if strings.Join(keys, " ") != tc.keys || ref != tc.ref {
			t.Errorf("%s %s: statuses %v, 413 %q; want %s, %q", tc.method, tc.path, keys, ref, tc.keys, tc.ref)
		}
	}
}
