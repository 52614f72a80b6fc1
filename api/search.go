package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/requestid"
	"github.com/domaind/domaind/internal/search"
)

// searchLimit is SPEC §8's domain search rate.
var searchLimit = ratelimit.PerMinute("search", 60)

type searchRequest struct {
	Q *string `json:"q"`
}

// The stream events of SPEC §2.5.
type (
	searchHeader struct {
		Kind         string   `json:"kind"`
		RequestID    string   `json:"request_id"`
		Primary      string   `json:"primary"`
		Domains      []string `json:"domains"`
		PrimaryIndex int      `json:"primary_index"`
	}
	searchMarker struct {
		Kind string `json:"kind"`
	}
	searchDone struct {
		Kind       string `json:"kind"`
		DurationMS int64  `json:"duration_ms"`
		Count      int    `json:"count"`
	}
)

// searchDomains answers POST /api/domain/search with an NDJSON stream: a
// header, one row per name written as soon as its check completes (the
// checks run concurrently), primary_done right after the queried name's row,
// and done. A client that goes away cancels the checks still running.
func (s *Server) searchDomains(c *gin.Context) error {
	start := time.Now()
	var req searchRequest
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	if req.Q == nil {
		return search.ErrNoQuery
	}
	names, err := s.svc.Search.Names(*req.Q)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(c.Request.Context())
	defer cancel()
	rows, wait, err := s.svc.Search.Check(ctx, names, pricesVisible(c), httpjson.Client(c))
	if err != nil {
		return err
	}
	defer wait()

	h := c.Writer.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Cache-Control", "no-store")
	c.Status(http.StatusOK)
	out := newNDJSON(c.Writer, start)
	domains := make([]string, len(names))
	for i, n := range names {
		domains[i] = n.ASCII
	}
	out.write(searchHeader{Kind: "header", RequestID: requestid.From(ctx), Primary: names[0].ASCII, Domains: domains, PrimaryIndex: 0})

	for i := range names {
		row := <-rows
		out.write(row)
		if row.Domain == names[0].ASCII {
			out.write(searchMarker{Kind: "primary_done"})
		}
		if out.err != nil {
			cancel() // the client is gone: stop the checks still running
			break
		}
		if i == len(names)-1 {
			out.write(searchDone{Kind: "done", DurationMS: time.Since(start).Milliseconds(), Count: len(names)})
		}
	}
	return nil
}

// The stream's write deadlines, in place of the server's WriteTimeout: each
// event must reach a client within streamEventTimeout, and the stream ends
// by streamCap after it started, however slowly the client reads.
const (
	streamEventTimeout = 10 * time.Second
	streamCap          = time.Minute
)

// ndjson writes one JSON object per line and flushes it, remembering the
// first write error (a client that went away, or one too slow to read).
type ndjson struct {
	w   gin.ResponseWriter
	rc  *http.ResponseController
	enc *json.Encoder
	end time.Time // the stream's cap
	err error
}

func newNDJSON(w gin.ResponseWriter, start time.Time) *ndjson {
	return &ndjson{w: w, rc: http.NewResponseController(w), enc: json.NewEncoder(w), end: start.Add(streamCap)}
}

func (o *ndjson) write(v any) {
	if o.err != nil {
		return
	}
	deadline := time.Now().Add(streamEventTimeout)
	if deadline.After(o.end) {
		deadline = o.end
	}
	o.rc.SetWriteDeadline(deadline) // unsupported in tests' recorders
	if o.err = o.enc.Encode(v); o.err == nil {
		o.err = o.rc.Flush()
	}
}
