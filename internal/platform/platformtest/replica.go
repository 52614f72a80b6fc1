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
	run := func(name string, args ...string) {
		tb.Helper()
		cmd := exec.Command(filepath.Join(bin, name), args...)
		if os.Geteuid() == 0 { // initdb and postgres refuse root
			cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(bin, name)}, args...)...)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	if os.Geteuid() == 0 {
		if err := exec.Command("chown", "postgres:", dir).Run(); err != nil {
			tb.Fatalf("chown %s to postgres: %v", dir, err)
		}
	}
	primaryDir, replicaDir := filepath.Join(dir, "primary"), filepath.Join(dir, "replica")
	primaryPort, replicaPort := freePort(tb), freePort(tb)
	run("initdb", "-D", primaryDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	conf := fmt.Sprintf("listen_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nfsync = off\nwal_level = replica\n", dir)
	appendFile(tb, filepath.Join(primaryDir, "postgresql.conf"), conf)
	appendFile(tb, filepath.Join(primaryDir, "pg_hba.conf"), "host replication all 127.0.0.1/32 trust\n")
	run("pg_ctl", "-D", primaryDir, "-o", "-p "+strconv.Itoa(primaryPort), "-l", filepath.Join(dir, "primary.log"), "-w", "start")
	tb.Cleanup(func() { run("pg_ctl", "-D", primaryDir, "-m", "immediate", "stop") })
	run("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(primaryPort), "-U", "postgres", "-D", replicaDir, "-R", "-X", "stream")
	run("pg_ctl", "-D", replicaDir, "-o", "-p "+strconv.Itoa(replicaPort), "-l", filepath.Join(dir, "replica.log"), "-w", "start")
	tb.Cleanup(func() { run("pg_ctl", "-D", replicaDir, "-m", "immediate", "stop") })
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
