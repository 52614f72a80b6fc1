package main

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/testtool"
)

// TestEndToEndThroughPgBouncer runs the roles on Postgres through
// PgBouncer in transaction pooling (Debian's pgbouncer), with the URL
// docs/operations.md gives for it (pgx's exec mode: no named prepared
// statements, which a pooler that hands each transaction any server
// connection would lose), under the money workload: the migration takes
// its lock through the pooler, and the chaos invariants hold.
func TestEndToEndThroughPgBouncer(t *testing.T) {
	c := newCluster(t) // skips without the real servers
	// Debian puts pgbouncer in /usr/sbin, not on every PATH.
	bin := testtool.Path(t, "the test runs PgBouncer", "pgbouncer", "/usr/sbin/pgbouncer")
	c.setenv("DOMAIND_DATABASE_URL", c.startPgBouncer(bin, c.getenv("DOMAIND_DATABASE_URL")))
	run := chaosSettings(t)
	run.duration = min(run.duration, 15*time.Second)
	t.Logf("pgbouncer: seed %d, workload %v (replay: DOMAIND_CHAOS_SEED=%d)", run.seed, run.duration, run.seed)
	w := newChaosWorld(t, c, run)
	w.runWorkload(run)
	w.settleAndCheck(run)
}

// startPgBouncer runs PgBouncer in transaction pooling in front of the
// database of direct (a test schema's URL, whose search_path each server
// connection is given) and returns the URL the roles take through it.
func (c *cluster) startPgBouncer(bin, direct string) string {
	t := c.t
	t.Helper()
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755) // PgBouncer refuses to run as root: it runs as nobody
	addr := testtool.FreeAddr(t)
	host, port, _ := net.SplitHostPort(addr)
	dbHost, dbPort, _ := net.SplitHostPort(u.Host)
	ini := fmt.Sprintf(`[databases]
domaind = host=%s port=%s dbname=%s user=%s connect_query='SET search_path TO %s'

[pgbouncer]
listen_addr = %s
listen_port = %s
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 20
ignore_startup_parameters = extra_float_digits
`, dbHost, dbPort, strings.TrimPrefix(u.Path, "/"), u.User.Username(), u.Query().Get("search_path"),
		host, port, filepath.Join(dir, "users.txt"))
	if err := os.WriteFile(filepath.Join(dir, "users.txt"), []byte(fmt.Sprintf("%q \"\"\n", u.User.Username())), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pgbouncer.ini"), []byte(ini), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join(dir, "pgbouncer.ini")}
	if os.Geteuid() == 0 {
		args = append([]string{"-u", "nobody"}, args...)
	}
	cmd := exec.Command(bin, args...)
	var log bytes.Buffer // written by the command's copying goroutine until Wait returns
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start pgbouncer: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("--- pgbouncer log ---\n%s", log.String())
		}
	})
	c.waitFor("pgbouncer listening", 10*time.Second, func() bool {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
	return fmt.Sprintf("postgres://%s@%s/domaind?sslmode=disable&default_query_exec_mode=exec", u.User.Username(), addr)
}
