package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/account"
	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/password"
	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// syncBuffer is a bytes.Buffer safe to read while run writes to it.
type syncBuffer struct {
	mu chan struct{}
	b  bytes.Buffer
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{mu: make(chan struct{}, 1)} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.b.String()
}

func TestRunRefusesBadCommandLines(t *testing.T) {
	getenv := func(string) string { return "" }
	var usage usageError
	for _, args := range [][]string{{"frobnicate"}, {"api", "worker"}, {"api", "--listings", "5"},
		{"seed", "--listings", "-1"}, {"seed", "--listings", "many"}, {"seed", "extra"},
		{"partner"}, {"partner", "delete", "x"}, {"partner", "approve"}, {"partner", "list", "all"}} {
		err := run(context.Background(), args, getenv, &bytes.Buffer{}, &bytes.Buffer{})
		if !errors.As(err, &usage) {
			t.Errorf("run %v = %v, want a usage error", args, err)
		}
	}
}

func TestRunFailsFastOnBadConfig(t *testing.T) {
	env := map[string]string{"DOMAIND_DATA_DIR": t.TempDir(), "DOMAIND_SANDBOX_LATENCY": "soon"}
	err := run(context.Background(), []string{"all"}, func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{})
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Var != "DOMAIND_SANDBOX_LATENCY" {
		t.Fatalf("err = %v, want a config error naming DOMAIND_SANDBOX_LATENCY", err)
	}
}

func TestRunRefusesSplitRolesOnTheEmbeddedDefault(t *testing.T) {
	env := map[string]string{"DOMAIND_DATA_DIR": t.TempDir()}
	err := run(context.Background(), []string{"worker"}, func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{})
	var ce *config.Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "domaind all") {
		t.Fatalf("err = %v, want advice to run `domaind all`", err)
	}
}

func TestRunRefusesATakenPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	env := map[string]string{"DOMAIND_DATA_DIR": t.TempDir(), "DOMAIND_HTTP_ADDR": ln.Addr().String()}
	err = run(context.Background(), nil, func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{})
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Var != "DOMAIND_HTTP_ADDR" {
		t.Fatalf("err = %v, want a config error naming DOMAIND_HTTP_ADDR", err)
	}
}

// TestRunAllEmbedded starts the embedded default as `make run` does, checks
// what a newcomer sees, and stops it the way Ctrl-C does.
func TestRunAllEmbedded(t *testing.T) {
	addr, env := testtool.FreeAddr(t), map[string]string{"DOMAIND_DATA_DIR": t.TempDir()}
	env["DOMAIND_HTTP_ADDR"] = addr
	_, port, _ := net.SplitHostPort(addr)
	base := "http://localhost:" + port // DOMAIND_BASE_URL's default follows DOMAIND_HTTP_ADDR
	stdout, stderr, cancel, done := startEmbedded(t, env)
	out := stdout.String()
	for _, want := range []string{base + "/monitoring/", base + "/healthz", `Ops login      user "ops"  password "`, "Partner key    id pk_test_"} {
		if !strings.Contains(out, want) {
			t.Errorf("welcome text lacks %q:\n%s", want, out)
		}
	}
	if status, _ := get(t, "http://"+addr+"/monitoring/api/queues"); status != 401 {
		t.Errorf("dashboard without credentials = %d, want 401", status)
	}
	// The scheduler's first outbox sweep (every 5 s) makes the maintenance queue.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, body := get(t, "http://"+addr+"/metrics")
		if strings.Contains(body, `domaind_queue_tasks{queue="maintenance",state="completed"}`) &&
			strings.Contains(body, "domaind_queue_scrape_error 0") && strings.Contains(body, "domaind_http_request_duration_seconds") &&
			strings.Contains(body, `asynq_queue_size{queue="maintenance"}`) &&
			strings.Contains(body, `domaind_ops_backlog{what="transfer_unconfirmed"} 0`) && strings.Contains(body, "domaind_ops_backlog_scrape_error 0") {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("/metrics lacks the queue, backlog or HTTP metrics:\n%s", body)
			break
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v after the context ended", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return within 30s of shutdown")
	}
	_, rest, _ := strings.Cut(out, `password "`)
	password, _, _ := strings.Cut(rest, `"`)
	if len(password) < 16 {
		t.Fatalf("generated password %q not found in the welcome text", password)
	}
	if strings.Contains(stderr.String(), password) {
		t.Errorf("the log shows the ops password")
	}
}

// startEmbedded runs `domaind all` in-process with env (which sets
// DOMAIND_HTTP_ADDR) and waits until it is ready. cancel stops it as
// Ctrl-C does; done then receives run's error.
func startEmbedded(t *testing.T, env map[string]string) (stdout, stderr *syncBuffer, cancel context.CancelFunc, done chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr = newSyncBuffer(), newSyncBuffer()
	done = make(chan error, 1)
	go func() { done <- run(ctx, nil, func(k string) string { return env[k] }, stdout, stderr) }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res, err := http.Get("http://" + env["DOMAIND_HTTP_ADDR"] + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return stdout, stderr, cancel, done
			}
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("not ready in time; log:\n%s", stderr.String())
		}
	}
}

// get fetches url and returns its status and body.
func get(tb testing.TB, url string) (int, string) {
	tb.Helper()
	res, err := http.Get(url)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("GET %s: read body: %v", url, err)
	}
	return res.StatusCode, string(body)
}

func TestRunRefusesAnUnreadableRDAPBootstrap(t *testing.T) {
	env := map[string]string{"DOMAIND_DATA_DIR": t.TempDir(), "DOMAIND_HTTP_ADDR": "127.0.0.1:0",
		"DOMAIND_RDAP_BOOTSTRAP": filepath.Join(t.TempDir(), "missing.json")}
	err := run(context.Background(), nil, func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{})
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Var != "DOMAIND_RDAP_BOOTSTRAP" {
		t.Fatalf("err = %v, want a config error naming DOMAIND_RDAP_BOOTSTRAP", err)
	}
}

func TestRunSeedLoadsTheSandboxAndSyncsTLDs(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"DOMAIND_DATA_DIR": dir}
	getenv := func(k string) string { return env[k] }
	for range 2 { // seeding twice is harmless
		if err := run(context.Background(), []string{"seed"}, getenv, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
	}
	db := openDataDir(t, dir)
	var tlds, prices int64
	db.Model(&models.TLD{}).Count(&tlds)
	db.Model(&models.TLDPrice{}).Count(&prices)
	if tlds < 60 || prices != 4*tlds {
		t.Errorf("after seed: %d TLDs and %d prices, want 60+ TLDs with four prices each", tlds, prices)
	}
	var listings, sandboxes int64
	db.Model(&models.Listing{}).Count(&listings)
	db.Model(&models.SandboxListing{}).Count(&sandboxes)
	if listings != demoListings || sandboxes != demoSandboxes {
		t.Errorf("%d listings and %d sandbox listings after seeding twice, want %d and %d once", listings, sandboxes, demoListings, demoSandboxes)
	}
	var creds []models.PartnerCredential
	db.Find(&creds)
	if len(creds) != 1 || creds[0].Environment != models.EnvSandbox || !strings.HasPrefix(creds[0].KeyID, "pk_test_") {
		t.Errorf("partner credentials after seeding twice: %+v; want the demo partner's one sandbox key", creds)
	}
	// The embedded default seeds demo data: the README's demo account signs in.
	demo, err := account.New(db, password.Default, time.Now).Authenticate(context.Background(), "demo@domaind.test", "demo-password")
	if err != nil || demo.Email != demoEmail {
		t.Errorf("demo account = %+v, %v; want demo@domaind.test with demo-password", demo, err)
	}
}

// openDataDir opens the SQLite database of an embedded data directory.
func openDataDir(tb testing.TB, dir string) *gorm.DB {
	tb.Helper()
	return modelstest.Reopen(tb, filepath.Join(dir, "domaind.db"))
}

func TestSeedMakesNoDemoAccountWhenDemoSeedingIsOff(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"DOMAIND_DATA_DIR": dir, "DOMAIND_SEED_DEMO": "false"}
	if err := run(context.Background(), []string{"seed"}, func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	db := openDataDir(t, dir)
	var users, listings int64
	db.Model(&models.User{}).Count(&users)
	db.Model(&models.Listing{}).Count(&listings)
	if users != 0 || listings != 0 {
		t.Errorf("%d users and %d listings seeded with DOMAIND_SEED_DEMO=false, want none", users, listings)
	}
	if err := run(context.Background(), []string{"seed", "--listings", "250"}, func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	db.Model(&models.Listing{}).Count(&listings)
	if listings != 250 {
		t.Errorf("seed --listings 250 left %d listings", listings)
	}
}

// TestPartnerCommandLine manages a partner as ops would from a shell: the
// secret is printed once, a live key waits for approval, and a revoked key
// shows in the list.
func TestPartnerCommandLine(t *testing.T) {
	env := map[string]string{"DOMAIND_DATA_DIR": t.TempDir()}
	partner := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(context.Background(), append([]string{"partner"}, args...), func(k string) string { return env[k] }, &out, io.Discard)
		return out.String(), err
	}
	if err := run(context.Background(), []string{"migrate"}, func(k string) string { return env[k] }, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	out, err := partner("create", "Acme Domains", "ops@acme.test")
	if err != nil || !strings.Contains(out, "(pending)") {
		t.Fatalf("create: %q, %v", out, err)
	}
	id := strings.Fields(out)[1]
	if _, err := partner("credential", id, "live", "search"); err == nil || !strings.Contains(err.Error(), "approval") {
		t.Errorf("a live key before approval: err = %v, want a conflict about approval", err)
	}
	if _, err := partner("credential", id, "sandbox", "search,teleport"); err == nil || !strings.Contains(err.Error(), "teleport") {
		t.Errorf("an unknown scope: err = %v, want it named", err)
	}
	if out, err := partner("approve", id); err != nil || !strings.Contains(out, "approved") {
		t.Fatalf("approve: %q, %v", out, err)
	}
	out, err = partner("credential", id, "live", "search,webhook")
	if err != nil {
		t.Fatal(err)
	}
	var keyID, sec string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "key_id" {
			keyID = f[1]
		} else if len(f) == 2 && f[0] == "secret" {
			sec = f[1]
		}
	}
	if !strings.HasPrefix(keyID, "pk_live_") || !strings.HasPrefix(sec, "sk_") {
		t.Fatalf("credential printed %q; want a pk_live_ key id and its secret", out)
	}
	if out, err = partner("list"); err != nil || !strings.Contains(out, keyID) || strings.Contains(out, sec) {
		t.Errorf("list: %q, %v; want the key id and never the secret", out, err)
	}
	if _, err := partner("revoke", id, keyID); err != nil {
		t.Fatal(err)
	}
	if _, err := partner("revoke", id, keyID); err == nil {
		t.Error("revoking twice succeeded; want not found")
	}
	out, _ = partner("list")
	if line := lineWith(out, keyID); !strings.Contains(line, time.Now().UTC().Format("2006-01-02")) {
		t.Errorf("list shows the revoked key as %q; want its revocation time", line)
	}
}

// lineWith returns the first line of s containing sub.
func lineWith(s, sub string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			return line
		}
	}
	return ""
}
