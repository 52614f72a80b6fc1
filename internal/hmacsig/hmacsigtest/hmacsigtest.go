// Package hmacsigtest hands tests the partner API's signing vectors:
// canonical queries, canonical strings, request signatures and webhook
// signatures computed by node (vectors.mjs, with encodeURIComponent and
// node:crypto) rather than by the Go code under test, so a test that checks
// them can catch a wrong implementation. Regenerate vectors.json from the
// repository root with
//
//	node internal/hmacsig/hmacsigtest/vectors.mjs > internal/hmacsig/hmacsigtest/vectors.json
package hmacsigtest

import (
	_ "embed"
	"encoding/json"
	"testing"
)

//go:embed vectors.json
var vectorsJSON []byte

// Vectors is the content of vectors.json.
type Vectors struct {
	Queries  []Query   `json:"queries"`
	Requests []Request `json:"requests"`
	Webhooks []Webhook `json:"webhooks"`
}

// Query is a raw query string and its canonical form; Canonical is nil when
// the query must be refused (a malformed escape, or not UTF-8).
type Query struct {
	Name      string  `json:"name"`
	Raw       string  `json:"raw"`
	Canonical *string `json:"canonical"`
}

// Request is a whole signed request: what is sent, the canonical string it
// is signed over and its X-Service-Signature under Secret.
type Request struct {
	Name            string `json:"name"`
	Secret          string `json:"secret"`
	Method          string `json:"method"`
	Path            string `json:"path"`
	Query           string `json:"query"`
	Timestamp       string `json:"timestamp"`
	Nonce           string `json:"nonce"`
	Body            string `json:"body"`
	CanonicalQuery  string `json:"canonical_query"`
	CanonicalString string `json:"canonical_string"`
	Signature       string `json:"signature"`
}

// Webhook is a webhook body and its signature under Secret.
type Webhook struct {
	Name      string `json:"name"`
	Secret    string `json:"secret"`
	Body      string `json:"body"`
	Signature string `json:"signature"`
}

// Load returns the vectors.
func Load(tb testing.TB) Vectors {
	tb.Helper()
	var v Vectors
	if err := json.Unmarshal(vectorsJSON, &v); err != nil {
		tb.Fatalf("vectors.json: %v", err)
	}
	if len(v.Queries) == 0 || len(v.Requests) == 0 || len(v.Webhooks) == 0 {
		tb.Fatalf("vectors.json: a section is empty")
	}
	return v
}
