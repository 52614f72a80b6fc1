package platformtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/domaind/domaind/internal/testtool"
)

// NewReplicatedPostgres starts a Postgres primary of the test's own and a
// streaming replica of it made with pg_basebackup, both stopped when the
// test ends, and returns their URLs. It needs Debian's postgresql package
// (initdb, pg_ctl, pg_basebackup); as root it runs them as postgres.
func NewReplicatedPostgres(tb testing.TB) (primary, replica string) {
	tb.Helper()
	out, err := exec.Command(testtool.Path(tb, "the test runs a Postgres primary and replica of its own", "pg_config"), "--bindir").Output()
	if err != nil {
		tb.Fatalf("pg_config --bindir: %v", err)
	}
	bin := strings.TrimSpace(string(out))
	dir, err := os.MkdirTemp("", "domaind-pg-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	try := func(name string, args ...string) error {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		if os.Geteuid() == 0 { // initdb and postgres refuse root
			cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(bin, name)}, args...)...)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
		}
		return nil
	}
	run := func(name string, args ...string) {
		tb.Helper()
		if err := try(name, args...); err != nil {
			tb.Fatal(err)
		}
	}
	// start starts the server of dataDir on a free port and returns it. A
	// port found free may be taken before the server binds it (other
	// tests' listeners and connections), so a start that fails is tried
	// again on another port; the last failure says what the server logged.
	start := func(dataDir string) int {
		tb.Helper()
		logFile := dataDir + ".log"
		var err error
		for range 3 {
			port := freePort(tb)
			if err = try("pg_ctl", "-D", dataDir, "-o", "-p "+strconv.Itoa(port), "-l", logFile, "-w", "start"); err == nil {
				tb.Cleanup(func() { run("pg_ctl", "-D", dataDir, "-m", "immediate", "stop") })
				return port
			}
		}
		logged, _ := os.ReadFile(logFile)
		tb.Fatalf("%v\n%s:\n%s", err, logFile, logged)
		return 0
	}
	if os.Geteuid() == 0 {
		if err := exec.Command("chown", "postgres:", dir).Run(); err != nil {
			tb.Fatalf("chown %s to postgres: %v", dir, err)
		}
	}
	primaryDir, replicaDir := filepath.Join(dir, "primary"), filepath.Join(dir, "replica")
	run("initdb", "-D", primaryDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	conf := fmt.Sprintf("listen_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nfsync = off\nwal_level = replica\n", dir)
	appendFile(tb, filepath.Join(primaryDir, "postgresql.conf"), conf)
	appendFile(tb, filepath.Join(primaryDir, "pg_hba.conf"), "host replication all 127.0.0.1/32 trust\n")
	primaryPort := start(primaryDir)
	run("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(primaryPort), "-U", "postgres", "-D", replicaDir, "-R", "-X", "stream")
	replicaPort := start(replicaDir)
	url := func(port int) string {
		return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	}
	return url(primaryPort), url(replicaPort)
}

func appendFile(tb testing.TB, path, text string) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(text)
		f.Close()
	}
	if err != nil {
		tb.Fatalf("append to %s: %v", path, err)
	}
}

func freePort(tb testing.TB) int {
	_, port, _ := net.SplitHostPort(testtool.FreeAddr(tb))
	n, _ := strconv.Atoi(port)
	return n
}
