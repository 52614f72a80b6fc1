// Package openapi holds the service's OpenAPI 3.1 document (openapi.yaml,
// built into the binary) and serves it: as YAML and JSON, and as a
// readable HTML reference rendered on the server from the same document.
//
// The document describes the service as it behaves; the API tests check
// every request and response they make against it (see openapitest).
package openapi

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/pb33f/go-yaml"
)

// spec is the document as written. Its servers[0].url is DefaultBaseURL.
//
//go:embed openapi.yaml
var spec []byte

//go:embed docs.html docs.css
var assets embed.FS

// DefaultBaseURL is the base URL the document is written for (servers[0].url
// of openapi.yaml). New replaces it with the deployment's base URL.
const DefaultBaseURL = "http://localhost:8080"

// Spec returns the document as written, for tools and tests.
func Spec() []byte { return bytes.Clone(spec) }

// Handler serves the document for one deployment: every URL in it that
// starts with DefaultBaseURL (servers[0].url, the OAuth endpoints, the
// examples' status URLs) starts with the deployment's base URL instead.
type Handler struct {
	yaml []byte
	json []byte
	css  []byte
	// docs renders the HTML reference, once, at its first request (the
	// API tests build many servers and seldom ask for it).
	docs func() ([]byte, error)
}

// parsedSpec is the document's YAML tree, parsed once per process.
var parsedSpec = sync.OnceValues(func() (*yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(spec, &root); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return &root, nil
})

// New prepares the document for baseURL (such as https://domains.example;
// a trailing slash is dropped): its YAML and its JSON, converted from the
// YAML once, here.
func New(baseURL string) (*Handler, error) {
	root, err := parsedSpec()
	if err != nil {
		return nil, err
	}
	doc := cloneNode(root)
	rebase(doc, DefaultBaseURL, strings.TrimSuffix(baseURL, "/"))
	var y bytes.Buffer
	enc := yaml.NewEncoder(&y)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("openapi: encode YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("openapi: encode YAML: %w", err)
	}
	j, err := nodeJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: convert to JSON: %w", err)
	}
	css, err := assets.ReadFile("docs.css")
	if err != nil {
		return nil, err
	}
	h := &Handler{yaml: y.Bytes(), json: j, css: css}
	h.docs = sync.OnceValues(func() ([]byte, error) { return renderDocs(h.yaml) })
	return h, nil
}

// Must returns h, panicking on err: for the embedded document, which the
// package's tests load, an error is a build defect.
func Must(h *Handler, err error) *Handler {
	if err != nil {
		panic(err)
	}
	return h
}

// ServeJSON answers GET /openapi.json.
func (h *Handler) ServeJSON(w http.ResponseWriter, _ *http.Request) {
	serve(w, "application/json", h.json)
}

// ServeYAML answers GET /openapi.yaml.
func (h *Handler) ServeYAML(w http.ResponseWriter, _ *http.Request) {
	serve(w, "application/yaml", h.yaml)
}

// ServeCSS answers GET /docs/docs.css, the reference's stylesheet.
func (h *Handler) ServeCSS(w http.ResponseWriter, _ *http.Request) {
	serve(w, "text/css; charset=utf-8", h.css)
}

// ServeDocs answers GET /docs: the document as an HTML page, without scripts.
func (h *Handler) ServeDocs(w http.ResponseWriter, _ *http.Request) {
	page, err := h.docs()
	if err != nil { // the package's tests render the page: only a build defect gets here
		http.Error(w, "the API reference could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("X-Frame-Options", "DENY")
	serve(w, "text/html; charset=utf-8", page)
}

func serve(w http.ResponseWriter, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// cloneNode copies a YAML tree deeply (aliases are not used in the document).
func cloneNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = cloneNode(child)
	}
	return &c
}

// rebase replaces the prefix from of every string scalar with to.
func rebase(n *yaml.Node, from, to string) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" && strings.HasPrefix(n.Value, from) {
		n.Value = to + strings.TrimPrefix(n.Value, from)
	}
	for _, c := range n.Content {
		rebase(c, from, to)
	}
}

// nodeJSON converts a YAML tree to JSON, keeping the order of mapping keys.
func nodeJSON(n *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, n); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: want one document", n.Line)
		}
		return writeJSON(b, n.Content[0])
	case yaml.AliasNode:
		return writeJSON(b, n.Alias)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteByte(':')
			if err := writeJSON(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		v, err := scalarValue(n)
		if err != nil {
			return err
		}
		out, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b.Write(out)
	default:
		return fmt.Errorf("line %d: unexpected YAML node kind %v", n.Line, n.Kind)
	}
	return nil
}

// scalarValue is a YAML scalar as the JSON value it stands for.
func scalarValue(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		return strconv.ParseBool(strings.ToLower(n.Value))
	case "!!int":
		v, err := strconv.ParseInt(n.Value, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return v, nil
	case "!!float":
		v, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return v, nil
	}
	return n.Value, nil
}
