package httpserver

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// serve runs New(h) on a listener of 127.0.0.1 wrapped by wrap, until the test ends.
func serve(t *testing.T, h http.Handler, opts Options, wrap func(net.Listener) net.Listener) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(h, slog.New(slog.NewTextHandler(io.Discard, nil)), opts)
	done := make(chan struct{})
	go func() { srv.Serve(wrap(ln)); close(done) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String()
}

func noWrap(ln net.Listener) net.Listener { return ln }

// closedWithin reports whether the server ends conn (EOF, reset, or an
// answer followed by the close) before the deadline; the test's own
// deadline only bounds a failing run.
func closedWithin(t *testing.T, conn net.Conn, d time.Duration) bool {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.ReadAll(conn)
	var ne net.Error
	return !errors.As(err, &ne) || !ne.Timeout()
}

// A body sent a byte at a time, then not at all, does not hold the
// connection past the read deadline: the handler's read fails and the
// connection closes.
func TestSlowBodyIsCutOff(t *testing.T) {
	readErr := make(chan error, 1)
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
		if err != nil {
			http.Error(w, "body too slow", http.StatusRequestTimeout)
		}
	}), Options{ReadTimeout: 300 * time.Millisecond}, noWrap)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(t, conn, 10*time.Second) {
		t.Fatal("a body that stopped arriving held the connection open")
	}
	if err := <-readErr; err == nil {
		t.Error("the handler read a whole body that never arrived")
	}
}

func TestSlowHeadersAreCutOff(t *testing.T) {
	addr := serve(t, http.NotFoundHandler(), Options{ReadHeaderTimeout: 300 * time.Millisecond}, noWrap)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
	if !closedWithin(t, conn, 10*time.Second) {
		t.Fatal("headers that stopped arriving held the connection open")
	}
}

// get sends one request on conn and reports whether an answer came back.
func get(conn net.Conn) bool {
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return false
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, res.Body)
	return res.StatusCode == http.StatusOK
}

func TestConnectionsArePerClientCapped(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	for _, tc := range []struct {
		name    string
		trusted []netip.Prefix
		capped  bool
	}{
		{"client", nil, true},
		{"trusted proxy", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := serve(t, ok, Options{}, func(ln net.Listener) net.Listener { return LimitListener(ln, 3, tc.trusted) })
			var conns []net.Conn
			for range 4 {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				conns = append(conns, conn)
			}
			for i, conn := range conns[:3] {
				if !get(conn) {
					t.Fatalf("connection %d within the cap was not served", i+1)
				}
			}
			if served := get(conns[3]); served == tc.capped {
				t.Fatalf("4th connection served = %v, want %v", served, !tc.capped)
			}
			if !tc.capped {
				return
			}
			conns[0].Close() // a place comes free
			deadline := time.Now().Add(5 * time.Second)
			for {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				served := get(conn)
				conn.Close()
				if served {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("a closed connection's place was not given back")
				}
			}
		})
	}
}

func TestClientKey(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
	} {
		if got := ClientKey(netip.MustParseAddr(tt.in)); got != tt.want {
			t.Errorf("ClientKey(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := ClientKey(netip.Addr{}); !strings.Contains(got, "unknown") {
		t.Errorf("ClientKey(invalid) = %q", got)
	}
}
