package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/tools"
	"github.com/domaind/domaind/models"
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
	if _, err := s.spend(c, toolPolicy(t), httpjson.Client(c)); err != nil {
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
	result, cached, err := s.svc.Inline.Run(ctx, t, input)
	var failed *tools.RunError
	if errors.As(err, &failed) {
		if _, known := httpjson.Coded(failed.Err); known {
			return failed.Err // refused by our rules: the request's error
		}
		// The tool ran and failed: an answer (ok false), not cached. What
		// the target did is the caller's to read; our side's failures are
		// told in their public words.
		s.log.InfoContext(ctx, "tool failed", "tool", t.Slug, "err", failed.Err)
		why := models.ErrorText(failed.Err, 500)
		var ours *tools.Failure
		if errors.As(failed.Err, &ours) {
			why = ours.Public
		}
		httpjson.MarkRetryLater(c) // nor kept for the request's Idempotency-Key
		c.JSON(http.StatusOK, gin.H{"ok": false, "cached": false, "result": gin.H{"error": why}})
		return nil
	}
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"ok": true, "cached": cached, "result": result})
	return nil
}

// startJob queues a job and answers with the ticket.
func (s *Server) startJob(c *gin.Context, t tools.Tool, input json.RawMessage) error {
	job, err := s.svc.Jobs.Queue(c.Request.Context(), t.Slug, input)
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
	if c.Param("slug") == "whois" { // a tool of its own route, which answers at once
		return fault.New(fault.NotFound, "whois has no jobs: POST /api/tools/whois answers with the record itself")
	}
	t, err := s.tool(c)
	if err != nil {
		return err
	}
	job, err := s.svc.Jobs.Get(c.Request.Context(), t.Slug, c.Param("jobId"))
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
