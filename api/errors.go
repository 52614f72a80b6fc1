package api

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/account"
	"github.com/domaind/domaind/internal/bulkop"
	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/internal/tools"
	"github.com/domaind/domaind/models"
)

// Error is an error with an HTTP meaning: the status, the spec's machine
// code and a message safe to show the client.
type Error struct {
	Status  int
	Code    string
	Message string
	// Field names the input at fault, when one is.
	Field string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// Errorf returns an *Error with a formatted message.
func Errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// errUnavailable answers requests while the database or Redis is down.
var errUnavailable = &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "a backing service is unavailable; retry shortly"}

// toHTTP is the one table that turns errors into responses. Whatever it does
// not know is a 500 whose details stay in the log.
func toHTTP(err error) (e *Error, known bool) {
	var (
		he   *Error
		mbe  *http.MaxBytesError
		dne  *domainname.Error
		nerr *net.OpError
	)
	var (
		ave  *account.ValidationError
		bfe  *bulkop.FieldError
		tie  *tools.InputError
		ble  *fetch.BlockedError
		dnse *net.DNSError
	)
	switch {
	case errors.As(err, &he):
		return he, true
	case errors.As(err, &bfe):
		return &Error{Status: http.StatusBadRequest, Code: "validation_error", Message: bfe.Error(), Field: bfe.Field}, true
	case errors.As(err, &tie):
		return &Error{Status: http.StatusBadRequest, Code: "validation_error", Message: tie.Error(), Field: tie.Field}, true
	case errors.As(err, &ble):
		return &Error{Status: http.StatusBadRequest, Code: "target_refused", Message: ble.Error()}, true
	case errors.As(err, &mbe):
		return Errorf(http.StatusRequestEntityTooLarge, "payload_too_large", "request body is larger than %d bytes", mbe.Limit), true
	case errors.As(err, &dne):
		return &Error{Status: http.StatusBadRequest, Code: "validation_error", Message: dne.Error()}, true
	case errors.As(err, &ave):
		return Errorf(http.StatusBadRequest, "validation_error", "%s %s", ave.Field, ave.Msg), true
	case errors.Is(err, account.ErrInvalidCredentials):
		return &Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "email or password is wrong"}, true
	case errors.Is(err, account.ErrEmailTaken):
		return &Error{Status: http.StatusConflict, Code: "conflict", Message: "an account with this email exists; sign in instead"}, true
	case errors.Is(err, account.ErrBadKey):
		return &Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "invalid API key or secret"}, true
	case errors.Is(err, account.ErrTooManyKeys):
		return Errorf(http.StatusConflict, "conflict", "at most %d live keys per user; revoke one first", account.MaxKeys), true
	case errors.Is(err, account.ErrKeyNotFound):
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such key"}, true
	case errors.Is(err, models.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: "not found"}, true
	case errors.Is(err, models.ErrConflict):
		return &Error{Status: http.StatusConflict, Code: "conflict", Message: "conflicts with the current state"}, true
	case errors.As(err, &nerr), errors.As(err, &dnse), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, driver.ErrBadConn),
		errors.Is(err, redis.ErrClosed), errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, context.DeadlineExceeded):
		return errUnavailable, false
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal_error", Message: "internal error"}, false
}

// legacyKey marks routes whose errors use the spec's older {"error": "..."} shape.
const legacyKey = "domaind.legacy_errors"

// legacyErrors is put on the routes the spec gives the legacy error shape.
func legacyErrors(c *gin.Context) { c.Set(legacyKey, true) }

// statusClientClosed is logged for a request whose client left before the
// answer (nginx's convention); nobody receives it.
const statusClientClosed = 499

// writeError answers with err in the route's error shape and stops the chain.
// An error caused by the client leaving is not a failure of ours.
func (s *Server) writeError(c *gin.Context, err error) {
	if errors.Is(err, context.Canceled) && c.Request.Context().Err() != nil {
		s.log.DebugContext(c.Request.Context(), "client left before the answer", "route", c.FullPath(), "err", err)
		c.AbortWithStatus(statusClientClosed)
		return
	}
	e, known := toHTTP(err)
	if !known {
		s.log.ErrorContext(c.Request.Context(), "request failed", "route", c.FullPath(), "status", e.Status, "err", err)
	}
	var blocked *fetch.BlockedError
	if errors.As(err, &blocked) {
		s.log.InfoContext(c.Request.Context(), "target refused", "route", c.FullPath(), "target", blocked.Target, "detail", blocked.Detail)
	}
	if c.Writer.Written() {
		c.Abort() // a streamed response already started; the log has the error
		return
	}
	if e.Code == "lookup_failed" {
		c.Set(retryLaterCtxKey, true)
	}
	if c.GetBool(legacyKey) {
		c.AbortWithStatusJSON(e.Status, gin.H{"error": e.Message})
		return
	}
	body := gin.H{"code": e.Code, "message": e.Message}
	if e.Field != "" {
		body["field"] = e.Field
	}
	c.AbortWithStatusJSON(e.Status, gin.H{"error": body})
}

// handle adapts a handler that returns an error to gin.
func (s *Server) handle(h func(c *gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			s.writeError(c, err)
		}
	}
}
