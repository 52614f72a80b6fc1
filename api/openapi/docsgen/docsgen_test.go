package docsgen

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/domaind/domaind/api/openapi"
)

// The page the service serves is the one the document renders to today,
// for any base URL the configuration takes: docs.gen.html is not stale, and putting the
// deployment's base URL into it gives what rendering the rebased document
// gives.
func TestGeneratedPageMatchesTheDocument(t *testing.T) {
	t.Parallel()
	for _, base := range []string{openapi.DefaultBaseURL, "https://domains.example/", "http://[::1]:9090/registry"} {
		h := openapi.Must(openapi.New(base))
		yaml, served := httptest.NewRecorder(), httptest.NewRecorder()
		h.ServeYAML(yaml, httptest.NewRequest("GET", "/openapi.yaml", nil))
		h.ServeDocs(served, httptest.NewRequest("GET", "/docs", nil))
		want, err := Render(yaml.Body.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(served.Body.Bytes(), want) {
			t.Fatalf("the page served for %s is not the document's rendering: run go generate ./api/openapi", base)
		}
	}
}

func TestMarkdown(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"paragraphs", "one\ntwo\n\nthree", "<p>one two</p>\n<p>three</p>\n"},
		{"list with continuation", "- a\n  b\n- `c`", "<ul>\n<li>a b</li>\n<li><code>c</code></li>\n</ul>\n"},
		{"heading", "### Title", "<h4>Title</h4>\n"},
		{"escaped", "<b> & **x**", "<p>&lt;b&gt; &amp; <strong>x</strong></p>\n"},
		{"code is literal", "`**<x>**`", "<p><code>**&lt;x&gt;**</code></p>\n"},
		{"link", "[docs](/docs) [js](javascript:alert(1))", `<p><a href="/docs">docs</a> [js](javascript:alert(1))</p>` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(markdown(tc.in)); got != tc.want {
				t.Errorf("markdown(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
