// Package openapitest checks HTTP exchanges against the service's OpenAPI
// document, so that tests which drive the API keep the document true.
//
// The response is always checked: its status must be documented for the
// operation, the headers documented as required must be there, and the
// body must fit the schema of its media type (an NDJSON stream line by
// line, as the array of its events). The request is checked only when the
// response is a success, since tests send malformed requests on purpose.
// A request the document has no operation for fails, except that any path
// may answer the document's NoRoute (404) or TrailingSlashRedirect (301,
// 307), and any documented path its MethodNotAllowed (405) for methods it
// does not list. A HEAD is checked as its GET (RFC 9110 §9.3.2: the same
// status and headers, no body), and a CORS preflight (OPTIONS answered
// 204) against the document's Preflight response.
package openapitest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/content"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/router"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/domaind/domaind/api/openapi"
)

// Exchange is a request as the server received it and its response.
type Exchange struct {
	Request     *http.Request
	RequestBody []byte
	Status      int
	Header      http.Header
	Body        []byte
}

// Checker checks exchanges against the document. It is safe for
// concurrent use.
type Checker struct {
	mu     sync.Mutex // the validator's caches are not documented as concurrency-safe
	v      validator.Validator
	router router.Router
	model  *v3.Document
	schema schema_validation.SchemaValidator
}

// shared is the Checker of the embedded document, built once: compiling
// its schemas takes a while.
var shared = sync.OnceValues(func() (*Checker, error) { return New(openapi.Spec()) })

// Default returns the Checker of the service's document.
func Default() (*Checker, error) { return shared() }

// New builds a Checker of the document spec (YAML or JSON).
func New(spec []byte) (*Checker, error) {
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		return nil, err
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		return nil, err
	}
	opts := []config.Option{
		config.WithFormatAssertions(),
		config.WithURLEncodedBodyValidation(),
		config.WithBodyDecoder("application/x-ndjson", content.DecoderFunc(decodeNDJSON)),
	}
	return &Checker{
		v:      validator.NewValidatorFromV3Model(&m.Model, opts...),
		router: router.NewRouter(&m.Model, router.WithPathOnlyMatching()),
		model:  &m.Model,
		schema: schema_validation.NewSchemaValidator(config.WithFormatAssertions()),
	}, nil
}

// decodeNDJSON reads an NDJSON stream as the array of its lines' values,
// the view OpenAPI 3.2 takes of sequential media types.
func decodeNDJSON(in *content.DecodeInput) (any, error) {
	events := []any{}
	sc := bufio.NewScanner(in.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			return nil, fmt.Errorf("line %d is not JSON: %w", n, err)
		}
		events = append(events, v)
	}
	return events, sc.Err()
}

// Check returns what in x the document does not allow, one readable line
// each, or nothing when x fits.
func (c *Checker) Check(x Exchange) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := x.Request.Clone(x.Request.Context())
	r.URL.Path, r.URL.RawPath = CleanPath(r.URL.Path), ""
	what := fmt.Sprintf("%s %s → %d", r.Method, r.URL.Path, x.Status)
	if r.Method == http.MethodOptions && x.Status == http.StatusNoContent {
		return c.checkShared(what, "Preflight", x)
	}
	head := r.Method == http.MethodHead
	if head {
		r.Method = http.MethodGet
	}
	route, err := c.router.FindRoute(r)
	if err == nil {
		err = exactly(route, r)
	}
	switch {
	case errors.Is(err, router.ErrMethodNotAllowed) && x.Status == http.StatusMethodNotAllowed:
		return c.checkShared(what, "MethodNotAllowed", x)
	case errors.Is(err, router.ErrMethodNotAllowed) || errors.Is(err, router.ErrPathNotFound):
		switch x.Status {
		case http.StatusNotFound:
			return c.checkShared(what, "NoRoute", x)
		case http.StatusMovedPermanently, http.StatusTemporaryRedirect:
			return c.checkShared(what, "TrailingSlashRedirect", x)
		}
		return []string{what + ": the document has no operation " + r.Method + " " + r.URL.Path}
	case err != nil:
		return []string{what + ": " + err.Error()}
	}
	what = fmt.Sprintf("%s %s (%s) → %d", r.Method, r.URL.Path, route.Operation.OperationId, x.Status)
	if head {
		return c.checkHead(what, route, x)
	}
	res := &http.Response{StatusCode: x.Status, Header: x.Header, Body: io.NopCloser(bytes.NewReader(x.Body)), Request: r}
	var problems []string
	if ok, errs := c.v.ValidateHttpResponse(withBody(r, x.RequestBody), res); !ok {
		problems = append(problems, describe(what+": response", errs)...)
	}
	if x.Status >= 200 && x.Status < 300 {
		if ok, errs := c.v.ValidateHttpRequest(withBody(r, x.RequestBody)); !ok {
			problems = append(problems, describe(what+": request", errs)...)
		}
	}
	return problems
}

// exactly refuses what the library's router matches leniently but the
// service's does not: a HEAD answered by a GET operation, and a path that
// differs from the template in its trailing slash (the service redirects).
func exactly(route *router.Route, r *http.Request) error {
	if _, ok := route.PathItem.GetOperations().Get(strings.ToLower(r.Method)); !ok {
		return &router.RouteError{Kind: router.ErrMethodNotAllowed, Route: route}
	}
	if strings.HasSuffix(r.URL.Path, "/") != strings.HasSuffix(route.Path, "/") {
		return &router.RouteError{Kind: router.ErrPathNotFound}
	}
	return nil
}

// checkHead checks a HEAD against its GET operation: the status must be
// one the GET documents (or its default), with the headers it requires.
func (c *Checker) checkHead(what string, route *router.Route, x Exchange) []string {
	resp := route.Operation.Responses.Codes.GetOrZero(fmt.Sprint(x.Status))
	if resp == nil {
		resp = route.Operation.Responses.Default
	}
	if resp == nil {
		return []string{fmt.Sprintf("%s: HEAD: status %d is not documented for the GET", what, x.Status)}
	}
	var problems []string
	for h, hd := range resp.Headers.FromOldest() {
		if hd.Required && !hasHeader(x.Header, h) {
			problems = append(problems, fmt.Sprintf("%s: HEAD: header %s is missing", what, h))
		}
	}
	if len(x.Body) > 0 {
		problems = append(problems, fmt.Sprintf("%s: HEAD: the answer has a body", what))
	}
	return problems
}

// hasHeader reports whether h has name, compared without case (the
// service sets RateLimit-* under the spelling the spec gives them, which
// Header.Get, canonicalising, would not find).
func hasHeader(h http.Header, name string) bool {
	for k, v := range h {
		if strings.EqualFold(k, name) && len(v) > 0 && v[0] != "" {
			return true
		}
	}
	return false
}

// CleanPath is p as the router matches it: "." and ".." segments resolved
// and repeated slashes dropped, a trailing slash kept.
func CleanPath(p string) string {
	c := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// checkShared checks x against the document's components/responses/name,
// the answer of requests that match no operation.
func (c *Checker) checkShared(what, name string, x Exchange) []string {
	resp := c.model.Components.Responses.GetOrZero(name)
	if resp == nil {
		return []string{what + ": the document has no components/responses/" + name}
	}
	var problems []string
	for h, hd := range resp.Headers.FromOldest() {
		if hd.Required && !hasHeader(x.Header, h) {
			problems = append(problems, fmt.Sprintf("%s: response (%s): header %s is missing", what, name, h))
		}
	}
	ct := strings.TrimSpace(strings.Split(x.Header.Get("Content-Type"), ";")[0])
	if ct == "" && len(x.Body) == 0 && (x.Status/100 == 3 || x.Status == http.StatusNoContent) { // a redirect or a preflight has no body
		return problems
	}
	mt := resp.Content.GetOrZero(ct)
	if mt == nil {
		return append(problems, fmt.Sprintf("%s: response (%s): content type %q is not documented", what, name, ct))
	}
	if !strings.HasSuffix(ct, "json") { // text: its schema is a string
		return problems
	}
	if ok, errs := c.schema.ValidateSchemaBytes(mt.Schema.Schema(), x.Body); !ok {
		problems = append(problems, describe(fmt.Sprintf("%s: response (%s) body %s", what, name, x.Body), errs)...)
	}
	return problems
}

// withBody returns a copy of r whose body reads b.
func withBody(r *http.Request, b []byte) *http.Request {
	c := r.Clone(r.Context())
	c.Body = io.NopCloser(bytes.NewReader(b))
	c.ContentLength = int64(len(b))
	return c
}

// describe turns the validator's errors into lines that say what failed where.
func describe(prefix string, errs []*liberrors.ValidationError) []string {
	var out []string
	for _, e := range errs {
		line := prefix + ": " + e.Message
		if e.Reason != "" && e.Reason != e.Message {
			line += " (" + e.Reason + ")"
		}
		for _, f := range e.SchemaValidationErrors {
			at := f.FieldPath
			if at == "" {
				at = "/" + strings.Join(f.InstancePath, "/")
			}
			line += fmt.Sprintf("\n    at %s: %s", at, f.Reason)
		}
		out = append(out, line)
	}
	return out
}
