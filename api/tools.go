package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/tools"
	"github.com/domaind/domaind/models"
)

// Tool jobs and inline runs.
const (
	// inlineToolTimeout bounds an inline tool's run.
	inlineToolTimeout = 20 * time.Second
)

// toolPolicy is the per-client quota of a tool: its PerHour requests in
// any hour.
func toolPolicy(t tools.Tool) ratelimit.Policy {
	return ratelimit.Policy{Name: "tool-" + t.Slug, Kind: ratelimit.Rate, Limit: t.PerHour, Window: time.Hour}
}

// tool returns the tool the path names, or a 404 listing the tools.
func (s *Server) tool(c *gin.Context) (tools.Tool, error) {
	slug := c.Param("slug")
	t, ok := s.tools.Get(slug)
	if !ok {
		slugs := append(s.tools.Slugs(), "whois")
		slices.Sort(slugs)
		return t, fault.New(fault.NotFound, "no tool %q; the tools are %s", slug, strings.Join(slugs, ", "))
	}
	return t, nil
}

// runTool answers POST /api/tools/{slug}: an inline tool's result (from the
// cache when the same input was answered within the tool's TTL), or an
// async tool's job ticket (202, Location = status_url). The quota is spent
// before the input is looked at; an invalid input or a refused target is
// a 400 and starts nothing.
func (s *Server) runTool(c *gin.Context) error {
	t, err := s.tool(c)
	if err != nil {
		return err
	}
	if _, err := s.spend(c, toolPolicy(t), clientKey(c)); err != nil {
		return err
	}
	if err := httpjson.RequireJSON(c); err != nil {
		return err
	}
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	input, err := t.Parse(ctx, body)
	if err != nil {
		return err
	}
	if t.Async {
		return s.startJob(c, t, input)
	}
	result, cached, err := s.runInline(ctx, t, input)
	var failed toolRunError
	if errors.As(err, &failed) {
		// The tool ran and failed: an answer (ok false), not cached. What
		// the target did is the caller's to read; our side's failures are
		// told in their public words.
		s.log.InfoContext(ctx, "tool failed", "tool", t.Slug, "err", failed.err)
		why := models.ErrorText(failed.err, 500)
		var ours *tools.Failure
		if errors.As(failed.err, &ours) {
			why = ours.Public
		}
		c.JSON(http.StatusOK, gin.H{"ok": false, "cached": false, "result": gin.H{"error": why}})
		return nil
	}
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"ok": true, "cached": cached, "result": result})
	return nil
}

// toolRunError is the failure of an inline tool's run: an answer of the
// tool (POST /api/tools/{slug} says ok false) rather than of the service.
type toolRunError struct{ err error }

func (e toolRunError) Error() string { return e.err.Error() }
func (e toolRunError) Unwrap() error { return e.err }

// runInline answers inline tool t's parsed input from the tool cache (the
// same input within the tool's TTL), or runs it and caches the result: its
// JSON, and whether it came from the cache. A run that failed is a
// toolRunError, unless its error is one of ours or the request's end.
func (s *Server) runInline(ctx context.Context, t tools.Tool, input json.RawMessage) (json.RawMessage, bool, error) {
	key := toolCacheKey(t.Slug, input)
	if cached, err := s.redis.Get(ctx, key).Bytes(); err == nil {
		return cached, true, nil
	} else if !errors.Is(err, redis.Nil) {
		return nil, false, fmt.Errorf("tool cache: %w", err)
	}
	rctx, cancel := context.WithTimeout(ctx, inlineToolTimeout)
	defer cancel()
	result, err := t.Run(rctx, input, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		if _, known := httpjson.Coded(err); known {
			return nil, false, err
		}
		return nil, false, toolRunError{err}
	}
	b, err := json.Marshal(result)
	if err != nil {
		return nil, false, fmt.Errorf("encode %s result: %w", t.Slug, err)
	}
	if err := s.redis.Set(context.WithoutCancel(ctx), key, b, t.TTL).Err(); err != nil {
		s.log.WarnContext(ctx, "tool cache write failed", "tool", t.Slug, "err", err)
	}
	return b, false, nil
}

// toolCacheKey is the Redis key of a tool's cached answer to input.
func toolCacheKey(slug string, input json.RawMessage) string {
	sum := sha256.Sum256(input)
	return "tools:cache:" + slug + ":" + hex.EncodeToString(sum[:16])
}

// startJob queues a job and answers with the ticket.
func (s *Server) startJob(c *gin.Context, t tools.Tool, input json.RawMessage) error {
	job, err := s.jobs.Queue(c.Request.Context(), t.Slug, input)
	if err != nil {
		return err
	}
	statusURL := s.cfg.BaseURL.JoinPath("api/tools", t.Slug, "status", job.ID).String()
	c.Header("Location", statusURL)
	c.JSON(http.StatusAccepted, gin.H{"ok": true, "cached": false, "result": gin.H{"mode": "async", "jobId": job.ID, "status_url": statusURL}})
	return nil
}

// getToolJob answers GET /api/tools/{slug}/status/{jobId}: the job as its
// task recorded it.
func (s *Server) getToolJob(c *gin.Context) error {
	t, err := s.tool(c)
	if err != nil {
		return err
	}
	job, err := s.jobs.Get(c.Request.Context(), t.Slug, c.Param("jobId"))
	if err != nil {
		return err
	}
	result := job.Result
	if len(result) == 0 {
		result = json.RawMessage("{}")
	}
	out := gin.H{
		"jobId": job.ID, "tool": job.Tool, "status": job.State, "result": result,
		"progress":   gin.H{"done": job.Done, "planned": job.Planned},
		"created_at": job.CreatedAt, "started_at": job.StartedAt, "finished_at": job.FinishedAt, "expires_at": job.ExpiresAt,
	}
	if job.Error != "" {
		out["error"] = job.Error
	}
	c.JSON(http.StatusOK, out)
	return nil
}
