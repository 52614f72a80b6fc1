// Package testtool is what tests share beyond the Go code. Path finds the
// programs some tests run (Node.js for the strict OAuth and MCP TypeScript
// clients and the signing vectors, Chromium for the pages, redis-server,
// curl): outside CI a test whose program is missing is skipped, saying
// which and why; in CI (the CI environment variable set, as .ci/run sets
// it) it fails, so that no test is left out of CI silently. WaitFor is a
// wait with a deadline; ServeTCP a server that stands in for one outside.
// Its tests also hold the module's tests to running in parallel when they
// own their database or Redis.
package testtool

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Path returns the path of the first of names found on the PATH. When
// none is, tb is skipped outside CI and failed in it, with why the test
// needs it.
func Path(tb testing.TB, why string, names ...string) string {
	tb.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s is not installed, and CI runs every test (.ci/run installs it): %s", names[0], why)
		return ""
	}
	tb.Skipf("%s is not installed: %s", names[0], why)
	return ""
}

// WaitFor polls cond every millisecond until it holds, and fails tb when
// it has not after ten seconds: a wait in a test always has a deadline.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting until %s", what)
			return
		}
	}
}

// ServeTCP listens on addr ("127.0.0.1:0", say) for tb's life and runs
// handle on each connection it accepts, in a goroutine of its own, closing
// the connection after. It returns the address it listens on. When tb ends
// it closes the listener and the connections still open, and waits for
// the handlers.
func ServeTCP(tb testing.TB, addr string, handle func(net.Conn)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
	)
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Go(func() {
				defer func() {
					c.Close()
					mu.Lock()
					delete(conns, c)
					mu.Unlock()
				}()
				handle(c)
			})
		}
	})
	return ln.Addr().String()
}

// FreeAddr is a 127.0.0.1 address with a port free a moment ago, for a
// server the test starts.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// StripeMock starts Stripe's own API mock (stripe-mock, which .ci/run
// installs with go install) for tb's life and returns its base URL. It
// answers as Stripe's API does, from Stripe's OpenAPI document: a request
// Stripe would refuse (an unknown parameter, a missing one) is refused.
func StripeMock(tb testing.TB) string {
	tb.Helper()
	bin := Path(tb, "the Stripe provider is tested against Stripe's API mock (go install github.com/stripe/stripe-mock@v0.203.0)", "stripe-mock")
	// A port free a moment ago may be another server's by the time
	// stripe-mock, which first reads Stripe's whole OpenAPI document, binds
	// it: then stripe-mock exits, and it is started again on other ports.
	// What answers must be stripe-mock itself, not the server that won.
	for attempt := 1; ; attempt++ {
		if base, ok := startStripeMock(tb, bin); ok {
			return base
		}
		if attempt == 3 {
			tb.Fatal("stripe-mock could not bind a free port three times")
		}
	}
}

// startStripeMock runs stripe-mock on two free ports and waits until it
// answers, as itself; ok is false when it exited first.
func startStripeMock(tb testing.TB, bin string) (base string, ok bool) {
	addr := FreeAddr(tb)
	cmd := exec.Command(bin, "-http-addr", addr, "-https-addr", FreeAddr(tb)) // without an HTTPS address it takes 12112, which two cannot share
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start stripe-mock: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	base = "http://" + addr
	client := &http.Client{Timeout: time.Second}
	answers := func() bool {
		resp, err := client.Get(base + "/v1/balance")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.Header.Get("Stripe-Mock-Version") != ""
	}
	WaitFor(tb, "stripe-mock answers on "+addr, func() bool {
		select {
		case <-exited:
			return true
		default:
			return answers()
		}
	})
	select {
	case <-exited:
		return "", false
	default:
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	return base, true
}
