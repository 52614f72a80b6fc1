package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/domaind/domaind/internal/logging"
	"github.com/domaind/domaind/internal/requestid"
)

func TestRequestIDFromContext(t *testing.T) {
	var buf bytes.Buffer
	log := logging.New(&buf, "json", slog.LevelInfo).With("role", "api")
	log.InfoContext(requestid.With(context.Background(), "rid-1"), "hello", "n", 1)
	log.DebugContext(context.Background(), "hidden")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("one JSON line expected, got %q: %v", buf.String(), err)
	}
	if rec["request_id"] != "rid-1" || rec["role"] != "api" || rec["msg"] != "hello" {
		t.Errorf("record = %v", rec)
	}
}
