// Package fault is the service's one coded error: a machine code the
// interface names (SPEC's error codes), a message safe to show whoever made
// the request, and, when one input is at fault, its name. Rules packages
// (accounts, bulk operations, tools, partners, orders) return it; the HTTP
// side maps each code to its status in one table (api/httpjson) and shows
// the message as it is. Anything else a handler returns is an internal
// error whose details stay in the log.
package fault

import (
	"errors"
	"fmt"
	"time"
)

// Code is a machine-readable error code.
type Code string

// The codes of the interface: the public API's (§7.1) and the partner
// API's (§7.2).
const (
	BadRequest       Code = "bad_request"      // the request as a whole is malformed
	Validation       Code = "validation_error" // an input is missing or wrong; Field names it
	InvalidCursor    Code = "invalid_cursor"   // a cursor from other filters or another sort
	TargetRefused    Code = "target_refused"   // a URL or host the service will not reach
	Unauthorized     Code = "unauthorized"     // not signed in, or a wrong login or key
	InvalidToken     Code = "invalid_token"    // a bearer token that is not valid
	CSRFFailed       Code = "csrf_failed"      // a cookie request without its CSRF token
	Forbidden        Code = "forbidden"        // signed in, but not allowed
	NotFound         Code = "not_found"
	LookupFailed     Code = "lookup_failed" // no registration data could be had: retry later
	MethodNotAllowed Code = "method_not_allowed"
	Conflict         Code = "conflict"
	PayloadTooLarge  Code = "payload_too_large"
	UnsupportedMedia Code = "unsupported_media_type" // a body of a content type the route does not read
	RateLimited      Code = "rate_limited"
	QuotaExceeded    Code = "quota_exceeded"
	Internal         Code = "internal_error"
	Unavailable      Code = "unavailable" // a backing service is down: retry shortly

	MissingCredentials      Code = "missing_credentials"       // no key id header
	MissingSignatureHeaders Code = "missing_signature_headers" // another signing header missing
	InvalidTimestamp        Code = "invalid_timestamp"
	ReplayDetected          Code = "replay_detected"
	InvalidSignature        Code = "invalid_signature"
	MissingIdempotencyKey   Code = "missing_idempotency_key"
	PriceMismatch           Code = "price_mismatch"
	QuoteExpired            Code = "quote_expired"
	CardDeclined            Code = "card_declined"    // the hosted checkout's payment was refused
	CheckoutExpired         Code = "checkout_expired" // a hosted checkout link past its expiry
)

// ErrRetryLater is the cause (Error.Err) of a refusal that may not hold
// for long: the same request may succeed later (another operation on the
// same domains ends, a check still running is decided). Its answer is not
// kept for the request's Idempotency-Key, so a retry with the key runs
// again.
var ErrRetryLater = errors.New("the refusal may not hold: retry later")

// Error is a coded error. Err, when set, is a cause kept for errors.Is
// and the log; it is not shown. RetryAfter, when set, is how long a
// refused caller waits before trying again (a Retry-After header).
type Error struct {
	Code       Code
	Message    string
	Field      string
	Err        error
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s (%s): %s", e.Code, e.Field, e.Message)
	}
	return string(e.Code) + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an Error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a validation error naming field, whose message begins
// with the field's name ("years must be 1 to 10").
func Invalid(field, format string, args ...any) *Error {
	return &Error{Code: Validation, Field: field, Message: field + " " + fmt.Sprintf(format, args...)}
}

// InvalidErr returns a validation error naming field whose message is
// err's (a parser's own words, such as a domain name's), with err as its
// cause.
func InvalidErr(field string, err error) *Error {
	return &Error{Code: Validation, Field: field, Message: err.Error(), Err: err}
}

// As returns the coded error in err's chain, if there is one.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
