package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// TestWorkerOnADatabaseNotMigrated starts `domaind worker` on a database
// `domaind migrate` never saw: it refuses, saying what to run, and with
// DOMAIND_AUTO_MIGRATE=true migrates it and runs.
func TestWorkerOnADatabaseNotMigrated(t *testing.T) {
	if os.Getenv("DOMAIND_TEST_DATABASE_URL") == "" {
		t.Skip("the worker role alone needs Postgres (DOMAIND_TEST_DATABASE_URL); models' TestCheckMigrated covers SQLite")
	}
	db, dbURL := modelstest.NewEmptyDB(t)
	env := map[string]string{
		"DOMAIND_DATABASE_URL": dbURL,
		"DOMAIND_REDIS_URL":    platformtest.NewRedis(t).URL,
		"DOMAIND_SECRET_KEY":   "migrate-test-secret-0123456789abcdef",
		"DOMAIND_OPS_USER":     "ops",
		"DOMAIND_OPS_PASSWORD": "ops-password",
		"DOMAIND_DATA_DIR":     t.TempDir(),
		"DOMAIND_HTTP_ADDR":    "127.0.0.1:0",
	}
	getenv := func(k string) string { return env[k] }

	err := run(context.Background(), []string{"worker"}, getenv, &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.Is(err, models.ErrNotMigrated) || err.Error() != `database is not migrated: run "domaind migrate"` {
		t.Fatalf("worker on an unmigrated database: %v, want the advice to run domaind migrate", err)
	}

	env["DOMAIND_AUTO_MIGRATE"] = "true"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := newSyncBuffer()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"worker"}, getenv, &bytes.Buffer{}, stderr) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), `"msg":"serving"`) { // the log is JSON off a terminal
		select {
		case err := <-done:
			t.Fatalf("worker with DOMAIND_AUTO_MIGRATE=true: %v; log:\n%s", err, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker with DOMAIND_AUTO_MIGRATE=true not serving in time; log:\n%s", stderr.String())
		}
	}
	if err := models.CheckMigrated(context.Background(), db); err != nil {
		t.Errorf("after the worker started with DOMAIND_AUTO_MIGRATE=true: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("worker returned %v after the context ended", err)
	}
}
