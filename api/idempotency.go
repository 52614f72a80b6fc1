package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	partnerapi "github.com/domaind/domaind/api/partner"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/idempotency"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/secret"
)

// HeaderIdempotencyKey and HeaderIdempotentReplayed are the request and
// response headers of idempotent retries.
const (
	HeaderIdempotencyKey     = "Idempotency-Key"
	HeaderIdempotentReplayed = "Idempotent-Replayed"
)

// policyCtxKey holds the rate limit whose headers an answer carries.
const policyCtxKey = "domaind.policy"

// heldKeyCtxKey holds the Idempotency-Key a request claimed (heldKey).
const heldKeyCtxKey = "domaind.held_key"

// heldKey is an Idempotency-Key a request claimed and holds while it runs:
// whose it is (callerScope), the key, and the request's fingerprint.
type heldKey struct{ scope, key, fp string }

// heldKeyOf is the Idempotency-Key c's request holds, if it sent one.
func heldKeyOf(c *gin.Context) (heldKey, bool) {
	k, ok := c.Get(heldKeyCtxKey)
	if !ok {
		return heldKey{}, false
	}
	return k.(heldKey), true
}

// idempotent makes POSTs carrying an Idempotency-Key safe to retry. The same
// key and body within 24 h replays the stored response with
// Idempotent-Replayed: true; the same key with another body, or while the
// first request still runs, is 409. Answers that say "retry later" (429,
// 5xx, lookup_failed) are not stored, and the key is freed, unless the
// request made its change (idempotency.CarriedOut): such a key is 409
// for a day if its answer was lost. A replay spends no rate-limit unit:
// it carries the limit's current RateLimit headers, not the stored ones.
// Keys are the caller's own (callerScope). An anonymous caller's answers
// are kept an hour, within its address's budget (idempotency.Anonymous);
// one over it is not kept, and a retry runs again. It runs before the
// route's rate limit and after its session, if the route has one. The
// handler finds the key it holds with heldKeyOf (a batch keeps its
// operations' answers under keys of its own, batchKeep).
func (s *Server) idempotent(c *gin.Context) {
	key := c.GetHeader(HeaderIdempotencyKey)
	if key == "" {
		c.Next()
		return
	}
	if !printable(key, 255) {
		s.resp.Error(c, fault.New(fault.BadRequest, "Idempotency-Key must be 1 to 255 printable ASCII characters"))
		return
	}
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		s.resp.Error(c, err)
		return
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	ctx := c.Request.Context()
	scope := callerScope(c)
	fp := idempotency.Fingerprint(c.Request.Method, c.Request.URL.Path, body)
	prior, claimed, err := s.svc.Idempotency.Begin(ctx, scope, key, fp)
	switch {
	case err != nil:
		s.resp.Error(c, err)
		return
	case !claimed && prior.Fingerprint != fp:
		s.resp.Error(c, fault.New(fault.Conflict, "this Idempotency-Key was already used with a different request"))
		return
	case !claimed && prior.Running && prior.CarriedOut:
		s.resp.Error(c, fault.New(fault.Conflict, "a request with this Idempotency-Key made its change, but its answer is not stored: "+
			"retry in a moment, and if this persists, look the result up (its answer was lost) rather than sending it again"))
		return
	case !claimed && prior.Running:
		s.resp.Error(c, fault.New(fault.Conflict, "a request with this Idempotency-Key is still being processed; retry later"))
		return
	case !claimed:
		s.replay(c, prior)
		return
	}
	// The transaction that makes the request's change marks the claim
	// with it (idempotency.CarriedOut).
	c.Request = c.Request.WithContext(s.svc.Idempotency.Claimed(ctx, scope, key, fp))
	c.Set(heldKeyCtxKey, heldKey{scope: scope, key: key, fp: fp})

	rec := &recorder{ResponseWriter: c.Writer}
	c.Writer = rec
	// The key is settled whatever becomes of the request (a client that
	// gave up is the one most likely to retry with it), so the writes do not
	// use the request's context.
	done := context.WithoutCancel(ctx)
	defer func() {
		if r := recover(); r != nil {
			s.svc.Idempotency.Release(done, scope, key)
			panic(r)
		}
	}()
	c.Next()
	if idempotency.Lost(c.Request.Context()) {
		return // ran past its hold: the key is a retry's now
	}
	// Not stored, so that a retry runs again: a refusal for now (429), a
	// failure of ours (5xx), an answer that says to retry later, and an
	// answer cut short because the client left (a 499 nobody received, a
	// stream half sent). An answer the handler finished is stored though
	// its client has left: the change it reports has been made, and the
	// client that gave up is the one most likely to retry.
	status := rec.Status()
	cut := status == httpjson.StatusClientClosed || (rec.streamed && ctx.Err() != nil)
	if status == http.StatusTooManyRequests || status >= 500 || httpjson.SaysRetryLater(c) || httpjson.Written(c) == fault.LookupFailed || cut {
		if err := s.svc.Idempotency.Release(done, scope, key); err != nil {
			s.log.WarnContext(ctx, "idempotency release failed", "err", err)
		}
		return
	}
	header := rec.Header().Clone()
	header.Del(HeaderRequestID)
	stored := idempotency.Record{Fingerprint: fp, Status: status, Header: header, Body: rec.body.Bytes()}
	if p, ok := c.Get(policyCtxKey); ok {
		limit := p.(ratelimit.Policy)
		stored.Limit = &limit
	}
	switch err := s.store(c, scope, key, stored); {
	case errors.Is(err, idempotency.ErrOverBudget):
		s.log.InfoContext(ctx, "idempotency: an anonymous answer was not kept", "err", err)
	case err != nil:
		s.log.WarnContext(ctx, "idempotency store failed", "err", err)
	}
}

// store keeps the answer of a claimed key: for 24 hours when the caller
// proved who it is, else within the anonymous budget of its address.
func (s *Server) store(c *gin.Context, scope, key string, r idempotency.Record) error {
	ctx := context.WithoutCancel(c.Request.Context())
	if vouched(c) {
		return s.svc.Idempotency.Complete(ctx, scope, key, r)
	}
	return s.svc.Idempotency.CompleteWithin(ctx, scope, key, r, httpjson.Client(c), idempotency.Anonymous)
}

// vouched says the request's caller proved who it is: a partner's
// signature, a session, the ops login, or a bearer token the route
// accepted. Anything else (no credentials, or ones no route checked) is
// anonymous.
func vouched(c *gin.Context) bool {
	_, partner := partnerapi.KeyID(c)
	_, user := currentUser(c)
	_, bearer := c.Get(scopesCtxKey)
	return partner || user || bearer || c.GetBool(opsCtxKey)
}

// replay answers with a stored response, its rate-limit headers as they
// stand now. An answer made for a bearer token is replayed only while the
// token is still valid (the replay runs before the route checks tokens).
func (s *Server) replay(c *gin.Context, prior idempotency.Record) {
	if scheme, tok, _ := strings.Cut(c.GetHeader("Authorization"), " "); strings.EqualFold(scheme, "Bearer") {
		if _, err := s.svc.OAuth.Authenticate(c.Request.Context(), strings.TrimSpace(tok), Resources(s.cfg)...); err != nil {
			s.bearerRefused(c, err)
			return
		}
	}
	h := c.Writer.Header()
	for k, v := range prior.Header {
		if strings.HasPrefix(k, "Ratelimit-") || strings.HasPrefix(k, "RateLimit-") || k == "Retry-After" {
			continue
		}
		h[k] = v
	}
	if prior.Limit != nil {
		if r, err := s.svc.Limiter.Status(c.Request.Context(), *prior.Limit, httpjson.Client(c)); err == nil {
			rateHeaders(c, *prior.Limit, r)
		}
	}
	h.Set(HeaderIdempotentReplayed, "true")
	c.Status(prior.Status)
	c.Writer.Write(prior.Body)
	c.Abort()
}

// callerScope is whose Idempotency-Keys a request uses: the partner
// credential's that signed it, else the signed-in person's, else the credential's it shows (a bearer token or a developer
// key: an answer made for a token that unmasks prices is never replayed to
// a request without it), else its client address's. Two callers never see
// each other's answers.
func callerScope(c *gin.Context) string {
	if id, ok := partnerapi.KeyID(c); ok {
		return idempotency.PartnerScope(id)
	}
	if u, ok := currentUser(c); ok {
		return "user:" + u.ID
	}
	if auth := c.GetHeader("Authorization"); auth != "" {
		return "auth:" + secret.Hash(auth)[:32]
	}
	if k := c.GetHeader("x-api-key"); k != "" {
		return "key:" + secret.Hash(k + "\x00" + c.GetHeader("x-api-secret"))[:32]
	}
	return "addr:" + httpjson.Client(c)
}

// recorder keeps a copy of what a handler writes, streaming included.
type recorder struct {
	gin.ResponseWriter
	body     bytes.Buffer
	streamed bool // flushed before the end: sent in parts
}

// Unwrap lets http.ResponseController reach the connection: the search
// stream sets its own write deadlines through it.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) Flush() {
	r.streamed = true
	r.ResponseWriter.Flush()
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) WriteString(s string) (int, error) {
	r.body.WriteString(s)
	return r.ResponseWriter.WriteString(s)
}
