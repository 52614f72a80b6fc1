// Package tools is the registry of the free tools (SPEC §4.1, POST
// /api/tools/{slug}): for each slug, how its input is validated, whether it
// answers inline or as an async job, how long an inline answer is cached,
// the per-client quota, and the code that runs it. The API parses and runs
// inline tools with it; the worker runs async jobs with it.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/domaind/domaind/internal/fault"
)

// Failure is a run that failed on the service's side, with what the
// caller may be told of it (Err, for the logs, may name internal addresses).
type Failure struct {
	Public string
	Err    error
}

func (f *Failure) Error() string { return f.Public + ": " + f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

// Progress is told how far an async job is: units done of units planned.
type Progress func(done, planned int)

// Tool is one free tool.
type Tool struct {
	Slug string
	// Async tools answer with a job to poll; the others answer inline.
	Async bool
	// TTL is how long an inline answer to the same input is served from the cache.
	TTL time.Duration
	// PerHour is how many requests one client may make of the tool an hour.
	PerHour int
	// Parse validates a request body and returns the canonical input (the
	// cache key and the job's input). Errors are *fault.Error, or a
	// *fetch.BlockedError for a target the service will not reach.
	Parse func(ctx context.Context, body []byte) (json.RawMessage, error)
	// Run runs the tool on a canonical input.
	Run func(ctx context.Context, input json.RawMessage, progress Progress) (any, error)
}

// Registry holds the tools by slug. A nil Registry has none.
type Registry struct {
	bySlug map[string]Tool
}

// Get returns the tool of slug.
func (r *Registry) Get(slug string) (Tool, bool) {
	if r == nil {
		return Tool{}, false
	}
	t, ok := r.bySlug[slug]
	return t, ok
}

// Slugs lists the tools' slugs.
func (r *Registry) Slugs() []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.bySlug))
	for s := range r.bySlug {
		out = append(out, s)
	}
	return out
}

func (r *Registry) add(t Tool) { r.bySlug[t.Slug] = t }

// define makes a Tool from a typed input: the body is decoded strictly into
// In, check validates and normalises it, and run gets it back from the
// canonical JSON.
func define[In any](t Tool, check func(ctx context.Context, in *In) error, run func(ctx context.Context, in In, progress Progress) (any, error)) Tool {
	t.Parse = func(ctx context.Context, body []byte) (json.RawMessage, error) {
		var in In
		if err := decodeStrict(body, &in); err != nil {
			return nil, err
		}
		if err := check(ctx, &in); err != nil {
			return nil, err
		}
		return json.Marshal(in)
	}
	t.Run = func(ctx context.Context, raw json.RawMessage, progress Progress) (any, error) {
		var in In
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, fmt.Errorf("%s: decode stored input: %w", t.Slug, err)
		}
		return run(ctx, in, progress)
	}
	return t
}

// decodeStrict decodes one JSON object, refusing unknown fields.
func decodeStrict(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return fault.Invalid("body", "must be a JSON object with the tool's input")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return fault.Invalid(te.Field, "must be a %s", jsonKind(te.Type.Kind().String()))
		case errors.As(err, &te): // the body itself: an array, a string, a number
			return fault.Invalid("body", "must be a JSON object with the tool's input (got %s)", te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return fault.Invalid(field, "is not an input of this tool")
		}
		return fault.Invalid("body", "is not a JSON object: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fault.Invalid("body", "must hold one JSON object")
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "int", "int64", "float64":
		return "number"
	case "bool":
		return "boolean"
	case "slice":
		return "list"
	}
	return "value of another type"
}
