package testtool

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"testing"
)

// recorder is a testing.TB that records how a test ended.
type recorder struct {
	testing.TB
	fatal, skipped bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.fatal = true }
func (r *recorder) Skipf(string, ...any)  { r.skipped = true }

func TestPath(t *testing.T) {
	if p := Path(t, "the shell", "no-such-program-x", "sh"); p == "" {
		t.Error("Path did not find sh after a missing name")
	}
	t.Setenv("CI", "")
	r := &recorder{TB: t}
	Path(r, "nothing", "no-such-program-x")
	if !r.skipped || r.fatal {
		t.Errorf("outside CI a missing program: skipped %v, failed %v; want skipped", r.skipped, r.fatal)
	}
	t.Setenv("CI", "true")
	r = &recorder{TB: t}
	Path(r, "nothing", "no-such-program-x")
	if r.skipped || !r.fatal {
		t.Errorf("in CI a missing program: skipped %v, failed %v; want failed", r.skipped, r.fatal)
	}
}

// ServeTCP answers each connection with its handler, and at the end of
// the test closes a connection whose handler still waits for the client,
// so that the handler returns.
func TestServeTCP(t *testing.T) {
	started, returned := make(chan struct{}), make(chan struct{})
	outer := t
	t.Run("server", func(t *testing.T) {
		addr := ServeTCP(t, "127.0.0.1:0", func(c net.Conn) {
			q, _ := bufio.NewReader(c).ReadString('\n')
			fmt.Fprintf(c, "you said %s", q)
		})
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprint(conn, "hello\n")
		if got, _ := io.ReadAll(conn); string(got) != "you said hello\n" {
			t.Errorf("answer = %q, want %q", got, "you said hello\n")
		}

		silent := ServeTCP(t, "127.0.0.1:0", func(c net.Conn) {
			close(started)
			io.Copy(io.Discard, c) // until the connection closes
			close(returned)
		})
		held, err := net.Dial("tcp", silent)
		if err != nil {
			t.Fatal(err)
		}
		outer.Cleanup(func() { held.Close() }) // the client never hangs up while the server runs
		<-started
	})
	select {
	case <-returned:
	default:
		t.Error("a handler waiting on its client still ran after the test ended")
	}
}
