// Package logging builds the process's slog logger and adapts it for asynq.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/domaind/domaind/internal/requestid"
)

// New returns a logger writing format ("text" or "json") at level to w. Every
// record logged with a context that carries a request id gets a request_id attribute.
func New(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewJSONHandler(w, opts)
	if format == "text" {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(requestIDHandler{h})
}

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := requestid.From(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(as)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}

// Asynq adapts a slog.Logger to asynq.Logger.
type Asynq struct{ Log *slog.Logger }

// Debug implements asynq.Logger.
func (a Asynq) Debug(args ...any) { a.Log.Debug(fmt.Sprint(args...), "component", "asynq") }

// Info implements asynq.Logger.
func (a Asynq) Info(args ...any) { a.Log.Info(fmt.Sprint(args...), "component", "asynq") }

// Warn implements asynq.Logger.
func (a Asynq) Warn(args ...any) { a.Log.Warn(fmt.Sprint(args...), "component", "asynq") }

// Error implements asynq.Logger.
func (a Asynq) Error(args ...any) { a.Log.Error(fmt.Sprint(args...), "component", "asynq") }

// Fatal implements asynq.Logger. asynq uses it for errors it cannot go on
// from; the process exits, as asynq expects.
func (a Asynq) Fatal(args ...any) {
	a.Log.Error(fmt.Sprint(args...), "component", "asynq", "fatal", true)
	os.Exit(1)
}

// Redis adapts a slog.Logger to go-redis's logger (redis.SetLogger), whose
// messages are connection trouble worth a warning.
type Redis struct{ Log *slog.Logger }

// Printf implements go-redis's internal.Logging.
func (r Redis) Printf(ctx context.Context, format string, v ...any) {
	r.Log.WarnContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}
