package api

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/idempotency"
	"github.com/domaind/domaind/internal/secret"
)

// HeaderIdempotencyKey and HeaderIdempotentReplayed are the request and
// response headers of idempotent retries.
const (
	HeaderIdempotencyKey     = "Idempotency-Key"
	HeaderIdempotentReplayed = "Idempotent-Replayed"
)

// idempotent makes POSTs carrying an Idempotency-Key safe to retry. The same
// key and body within 24 h replays the stored response; the same key with
// another body, or while the first request still runs, is 409. Responses
// that a retry might fix (429, 5xx) are not stored. Keys are scoped per
// client identity, so two clients never see each other's answers.
func (s *Server) idempotent(c *gin.Context) {
	key := c.GetHeader(HeaderIdempotencyKey)
	if key == "" {
		c.Next()
		return
	}
	if !printable(key, 255) {
		s.writeError(c, Errorf(http.StatusBadRequest, "bad_request", "Idempotency-Key must be 1 to 255 printable ASCII characters"))
		return
	}
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	ctx := c.Request.Context()
	// Keys are the client's own: its address, and the credential it shows
	// (an answer made for a token that unmasks prices is not replayed to
	// a request without it).
	scope := clientKey(c)
	if auth := c.GetHeader("Authorization"); auth != "" {
		scope += "|" + secret.Hash(auth)[:16]
	}
	fp := idempotency.Fingerprint(c.Request.Method, c.Request.URL.Path, body)
	prior, claimed, err := s.idem.Begin(ctx, scope, key, fp)
	switch {
	case err != nil:
		s.writeError(c, err)
		return
	case !claimed && prior.Fingerprint != fp:
		s.writeError(c, Errorf(http.StatusConflict, "conflict", "this Idempotency-Key was already used with a different request"))
		return
	case !claimed && prior.Running:
		s.writeError(c, Errorf(http.StatusConflict, "conflict", "a request with this Idempotency-Key is still being processed; retry later"))
		return
	case !claimed:
		h := c.Writer.Header()
		for k, v := range prior.Header {
			h[k] = v
		}
		h.Set(HeaderIdempotentReplayed, "true")
		c.Status(prior.Status)
		c.Writer.Write(prior.Body)
		c.Abort()
		return
	}

	rec := &recorder{ResponseWriter: c.Writer}
	c.Writer = rec
	// The key is settled whatever becomes of the request (a client that
	// gave up is the one most likely to retry with it), so the writes do not
	// use the request's context.
	done := context.WithoutCancel(ctx)
	defer func() {
		if r := recover(); r != nil {
			s.idem.Release(done, scope, key)
			panic(r)
		}
	}()
	c.Next()
	// Not stored, so that a retry runs again: a refusal for now (429), a
	// failure of ours (5xx), and an answer cut short because the client left
	// (a stream half sent, a 499 nobody received).
	status := rec.Status()
	if status == http.StatusTooManyRequests || status >= 500 || ctx.Err() != nil {
		if err := s.idem.Release(done, scope, key); err != nil {
			s.log.WarnContext(ctx, "idempotency release failed", "err", err)
		}
		return
	}
	header := rec.Header().Clone()
	header.Del(HeaderRequestID)
	if err := s.idem.Complete(done, scope, key, idempotency.Record{Fingerprint: fp, Status: status, Header: header, Body: rec.body.Bytes()}); err != nil {
		s.log.WarnContext(ctx, "idempotency store failed", "err", err)
	}
}

// recorder keeps a copy of what a handler writes, streaming included.
type recorder struct {
	gin.ResponseWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) WriteString(s string) (int, error) {
	r.body.WriteString(s)
	return r.ResponseWriter.WriteString(s)
}
