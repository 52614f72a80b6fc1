// Package openapi holds the service's OpenAPI 3.1 document and serves it:
// as YAML and JSON, and as a readable HTML reference. The document is
// written in openapi.yaml; what is served is generated from it by docsgen
// (openapi.gen.yaml, the document with the answers common to every
// operation written in, its JSON openapi.gen.json, and docs.gen.html): run
// go generate ./api/openapi after changing the document; the tests fail
// while they are stale.
//
// The document describes the service as it behaves; the API tests check
// every request and response they make against it (see openapitest).
package openapi

import (
	"bytes"
	_ "embed"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// spec is the document as served (openapi.gen.yaml). Its servers[0].url
// is DefaultBaseURL.
//
//go:embed openapi.gen.yaml
var spec []byte

//go:generate go run ./docsgen/gendocs

// specJSON is the document as JSON, and docsPage its HTML reference, both
// generated from openapi.yaml.
var (
	//go:embed openapi.gen.json
	specJSON []byte
	//go:embed docs.gen.html
	docsPage []byte
)

//go:embed docs.css
var css []byte

// DefaultBaseURL is the base URL the document is written for (servers[0].url
// of openapi.yaml). New replaces it with the deployment's base URL.
const DefaultBaseURL = "http://localhost:8080"

// Spec returns the document as served, for tools and tests.
func Spec() []byte { return bytes.Clone(spec) }

// Handler serves the document for one deployment: every URL in it that
// starts with DefaultBaseURL (servers[0].url, the OAuth endpoints, the
// examples' status URLs) starts with the deployment's base URL instead.
type Handler struct {
	yaml []byte
	json []byte
	docs []byte
}

// New prepares the document for baseURL (such as https://domains.example;
// a trailing slash is dropped): its YAML, its JSON and its reference page,
// with DefaultBaseURL replaced. baseURL is a base URL as the configuration
// takes it (scheme, host, a path of URL-safe characters): it reads the
// same in YAML, JSON and HTML.
func New(baseURL string) (*Handler, error) {
	base := []byte(strings.TrimSuffix(baseURL, "/"))
	if !safeBase.Match(base) {
		return nil, fmt.Errorf("openapi: base URL %q has characters the documents would have to escape", baseURL)
	}
	from := []byte(DefaultBaseURL)
	return &Handler{yaml: bytes.ReplaceAll(spec, from, base), json: bytes.ReplaceAll(specJSON, from, base),
		docs: bytes.ReplaceAll(docsPage, from, base)}, nil
}

// safeBase matches the base URLs that need no escaping in YAML, JSON or
// HTML.
var safeBase = regexp.MustCompile(`^https?://[A-Za-z0-9.:\[\]-]+(/[A-Za-z0-9._~%/-]*)?$`)

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
	serve(w, "text/css; charset=utf-8", css)
}

// DocsPolicy is the reference page's Content-Security-Policy: its own
// stylesheet and nothing else, no script, not framed.
const DocsPolicy = "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// ServeDocs answers GET /docs: the document as an HTML page, without scripts.
func (h *Handler) ServeDocs(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Security-Policy", DocsPolicy)
	w.Header().Set("X-Frame-Options", "DENY")
	serve(w, "text/html; charset=utf-8", h.docs)
}

func serve(w http.ResponseWriter, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}
