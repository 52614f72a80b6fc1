// Package httpjson holds the HTTP pieces every handler package shares (the
// public API in package api, the partner API in api/partner): the one
// table from error codes to statuses and the adapter that answers errors
// in the interface's shapes, strict JSON decoding, and the paging block
// with its Link header. It knows gin and the coded errors of
// internal/fault; it knows no route.
package httpjson

import (
	"context"
	"database/sql/driver"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"syscall"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/fetch"
)

// statuses is the one table from codes to HTTP statuses.
var statuses = map[fault.Code]int{
	fault.BadRequest:              http.StatusBadRequest,
	fault.Validation:              http.StatusBadRequest,
	fault.InvalidCursor:           http.StatusBadRequest,
	fault.TargetRefused:           http.StatusBadRequest,
	fault.MissingIdempotencyKey:   http.StatusBadRequest,
	fault.Unauthorized:            http.StatusUnauthorized,
	fault.InvalidToken:            http.StatusUnauthorized,
	fault.MissingCredentials:      http.StatusUnauthorized,
	fault.MissingSignatureHeaders: http.StatusUnauthorized,
	fault.InvalidTimestamp:        http.StatusUnauthorized,
	fault.ReplayDetected:          http.StatusUnauthorized,
	fault.InvalidSignature:        http.StatusUnauthorized,
	fault.CSRFFailed:              http.StatusForbidden,
	fault.Forbidden:               http.StatusForbidden,
	fault.NotFound:                http.StatusNotFound,
	fault.LookupFailed:            http.StatusNotFound,
	fault.MethodNotAllowed:        http.StatusMethodNotAllowed,
	fault.Conflict:                http.StatusConflict,
	fault.PayloadTooLarge:         http.StatusRequestEntityTooLarge,
	fault.UnsupportedMedia:        http.StatusUnsupportedMediaType,
	fault.PriceMismatch:           http.StatusUnprocessableEntity,
	fault.QuoteExpired:            http.StatusUnprocessableEntity,
	fault.CardDeclined:            http.StatusPaymentRequired,
	fault.CheckoutExpired:         http.StatusGone,
	fault.RateLimited:             http.StatusTooManyRequests,
	fault.QuotaExceeded:           http.StatusTooManyRequests,
	fault.Internal:                http.StatusInternalServerError,
	fault.Unavailable:             http.StatusServiceUnavailable,
}

// Status is the HTTP status of code; a code the table lacks (a test
// forbids one) is a 500.
func Status(code fault.Code) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

var (
	errInternal    = fault.New(fault.Internal, "internal error")
	errUnavailable = fault.New(fault.Unavailable, "a backing service is unavailable; retry shortly")
)

// Coded turns err into the coded error it is answered with: its own, or
// the one for a known foreign error (a body over its cap, a refused
// target, a malformed domain name, a backing service that does not
// answer). known is false for an error answered 500 or 503, whose details
// belong in the log.
func Coded(err error) (e *fault.Error, known bool) {
	var (
		mbe  *http.MaxBytesError
		dne  *domainname.Error
		ble  *fetch.BlockedError
		nerr *net.OpError
		dnse *net.DNSError
	)
	if fe, ok := fault.As(err); ok {
		return fe, fe.Code != fault.Internal && fe.Code != fault.Unavailable
	}
	switch {
	case errors.As(err, &ble):
		return &fault.Error{Code: fault.TargetRefused, Message: ble.Error()}, true
	case errors.As(err, &mbe):
		return fault.New(fault.PayloadTooLarge, "request body is larger than %d bytes", mbe.Limit), true
	case errors.As(err, &dne):
		return &fault.Error{Code: fault.Validation, Message: dne.Error()}, true
	case errors.As(err, &nerr), errors.As(err, &dnse), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, driver.ErrBadConn),
		errors.Is(err, redis.ErrClosed), errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, context.DeadlineExceeded):
		return errUnavailable, false
	}
	return errInternal, false
}

// Keys of the gin context.
const (
	legacyKey = "httpjson.legacy"
	oauthKey  = "httpjson.oauth"
	codeKey   = "httpjson.code"
	clientKey = "httpjson.client"
)

// SetClient records the request's client identity: its address as the
// rate limits count it (api's clientIdentity resolves it).
func SetClient(c *gin.Context, key string) { c.Set(clientKey, key) }

// Client is the request's client identity that SetClient recorded.
func Client(c *gin.Context) string { return c.GetString(clientKey) }

// Legacy marks a request to one of the older endpoints, whose 400 and 401
// take the older {"error": "…"} shape (SPEC §7.1); their other errors, a
// 429 or a 5xx, are typed like every endpoint's.
func Legacy(c *gin.Context) { c.Set(legacyKey, true) }

// OAuthErrors marks a request to an endpoint of the OAuth protocol (token,
// revocation, client registration), whose errors take the protocol's
// {"error": code, "error_description": message} shape (RFC 6749 §5.2,
// RFC 7591 §3.2.2): a validation error is invalid_request, the others
// keep their codes.
func OAuthErrors(c *gin.Context) { c.Set(oauthKey, true) }

// Written is the code of the error answered to c, "" if none was.
func Written(c *gin.Context) fault.Code {
	code, _ := c.Get(codeKey)
	s, _ := code.(fault.Code)
	return s
}

// StatusClientClosed is logged for a request whose client left before the
// answer (nginx's convention); nobody receives it.
const StatusClientClosed = 499

// Responder answers handlers' errors; Log gets what a client must not see.
type Responder struct{ Log *slog.Logger }

// Handle adapts a handler that returns an error to gin.
func (r Responder) Handle(h func(c *gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			r.Error(c, err)
		}
	}
}

// Error answers err in the route's error shape and stops the chain: the
// typed {"error":{"code","message","field"}} or, on Legacy routes,
// {"error":"message"}. An error caused by the client leaving is not a
// failure of ours; one that is not known is logged with its details and
// answered without them.
func (r Responder) Error(c *gin.Context, err error) {
	ctx := c.Request.Context()
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		r.Log.DebugContext(ctx, "client left before the answer", "route", c.FullPath(), "err", err)
		c.AbortWithStatus(StatusClientClosed)
		return
	}
	e, known := Coded(err)
	status := Status(e.Code)
	if !known {
		r.Log.ErrorContext(ctx, "request failed", "route", c.FullPath(), "status", status, "err", err)
	}
	var blocked *fetch.BlockedError
	if errors.As(err, &blocked) {
		r.Log.InfoContext(ctx, "target refused", "route", c.FullPath(), "target", blocked.Target, "detail", blocked.Detail)
	}
	if c.Writer.Written() {
		c.Abort() // a streamed response already started; the log has the error
		return
	}
	c.Set(codeKey, e.Code)
	if errors.Is(err, fault.ErrRetryLater) {
		MarkRetryLater(c)
	}
	if e.RetryAfter > 0 {
		c.Header("Retry-After", strconv.Itoa(ceilSeconds(e.RetryAfter)))
	}
	if c.GetBool(legacyKey) && (status == http.StatusBadRequest || status == http.StatusUnauthorized) {
		c.AbortWithStatusJSON(status, gin.H{"error": e.Message})
		return
	}
	if c.GetBool(oauthKey) {
		code := e.Code
		if code == fault.Validation || code == fault.BadRequest {
			code = "invalid_request"
		}
		c.Header("Cache-Control", "no-store")
		c.AbortWithStatusJSON(status, gin.H{"error": code, "error_description": e.Message})
		return
	}
	body := gin.H{"code": e.Code, "message": e.Message}
	if e.Field != "" {
		body["field"] = e.Field
	}
	c.AbortWithStatusJSON(status, gin.H{"error": body})
}

// retryLaterKey marks an answer that says "retry later" with a status that
// would otherwise be stored for its Idempotency-Key.
const retryLaterKey = "domaind.retry_later"

// MarkRetryLater marks c's answer as one that says "retry later" (a batch
// holding a lookup_failed; Error marks a refusal caused by
// fault.ErrRetryLater): it is not
// stored for the request's Idempotency-Key, so that a retry with the same
// key runs again and may succeed.
func MarkRetryLater(c *gin.Context) { c.Set(retryLaterKey, true) }

// SaysRetryLater reports whether c's answer was marked by MarkRetryLater.
func SaysRetryLater(c *gin.Context) bool { return c.GetBool(retryLaterKey) }

// headKey marks, in a request's context, a HEAD answered as a GET.
type headKey struct{}

// AsGet returns r as the GET that answers it (a HEAD is answered as its
// GET, without the body), remembering the method r was sent with.
func AsGet(r *http.Request) *http.Request {
	get := r.Clone(context.WithValue(r.Context(), headKey{}, r.Method))
	get.Method = http.MethodGet
	return get
}

// SentMethod is the method r was sent with: HEAD for one answered as a
// GET (what a signature covers).
func SentMethod(r *http.Request) string {
	if m, ok := r.Context().Value(headKey{}).(string); ok {
		return m
	}
	return r.Method
}
