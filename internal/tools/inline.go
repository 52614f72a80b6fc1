package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/fault"
)

// InlineTimeout bounds an inline tool's run.
const InlineTimeout = 20 * time.Second

// SuggestSlug names the domain-suggest tool.
const SuggestSlug = "domain-suggest"

// Inline runs the inline tools of a registry, answering an input the tool
// answered within its TTL from a Redis cache shared by every API process.
type Inline struct {
	tools *Registry
	rdb   redis.UniversalClient
	log   *slog.Logger
}

// NewInline returns the inline runs of r's tools, cached in rdb.
func NewInline(r *Registry, rdb redis.UniversalClient, log *slog.Logger) *Inline {
	return &Inline{tools: r, rdb: rdb, log: log}
}

// RunError is an inline tool's failed run: the tool's answer (the target
// refused, timed out, said something unreadable) rather than the
// service's failure. It is not cached.
type RunError struct{ Err error }

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// Run answers inline tool t's parsed input (what its Parse returned) from
// the cache, or runs it within InlineTimeout and caches the result: its
// JSON, and whether it came from the cache. A failed run is a *RunError;
// the end of ctx is ctx's error.
func (in *Inline) Run(ctx context.Context, t Tool, input json.RawMessage) (result json.RawMessage, cached bool, err error) {
	key := cacheKey(t.Slug, input)
	if b, err := in.rdb.Get(ctx, key).Bytes(); err == nil {
		return b, true, nil
	} else if !errors.Is(err, redis.Nil) {
		return nil, false, fmt.Errorf("tool cache: %w", err)
	}
	rctx, cancel := context.WithTimeout(ctx, InlineTimeout)
	defer cancel()
	out, err := t.Run(rctx, input, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, &RunError{err}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, false, fmt.Errorf("encode %s result: %w", t.Slug, err)
	}
	if err := in.rdb.Set(context.WithoutCancel(ctx), key, b, t.TTL).Err(); err != nil {
		in.log.WarnContext(ctx, "tool cache write failed", "tool", t.Slug, "err", err)
	}
	return b, false, nil
}

// Suggest runs domain-suggest on s, checked as POST
// /api/tools/domain-suggest checks it, through the same cache.
func (in *Inline) Suggest(ctx context.Context, s SuggestInput) (SuggestResult, error) {
	t, ok := in.tools.Get(SuggestSlug)
	if !ok {
		return SuggestResult{}, fault.New(fault.Unavailable, "name suggestions are not available on this server")
	}
	body, err := json.Marshal(s)
	if err != nil {
		return SuggestResult{}, err
	}
	input, err := t.Parse(ctx, body)
	if err != nil {
		return SuggestResult{}, err
	}
	result, _, err := in.Run(ctx, t, input)
	if err != nil {
		return SuggestResult{}, err
	}
	var r SuggestResult
	if err := json.Unmarshal(result, &r); err != nil {
		return SuggestResult{}, fmt.Errorf("read %s's result: %w", SuggestSlug, err)
	}
	return r, nil
}

// cacheKey is the Redis key of a tool's cached answer to input.
func cacheKey(slug string, input json.RawMessage) string {
	sum := sha256.Sum256(input)
	return "tools:cache:" + slug + ":" + hex.EncodeToString(sum[:16])
}
