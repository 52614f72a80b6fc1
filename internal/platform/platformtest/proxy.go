package platformtest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy is a TCP forwarder in front of a server, for tests that take the
// server away (Stop: refuse new connections and cut open ones) and bring it
// back (Start) on the same address.
type Proxy struct {
	Addr   string
	target string

	mu       sync.Mutex
	ln       net.Listener
	conns    map[net.Conn]bool
	accepted int
	wg       sync.WaitGroup
}

// NewProxy starts a proxy to target, stopped at cleanup.
func NewProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("proxy listen: %v", err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, conns: map[net.Conn]bool{}}
	p.serve(ln)
	tb.Cleanup(func() { p.Stop(); p.wg.Wait() })
	return p
}

// Stop closes the listener and every open connection.
func (p *Proxy) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Start listens again on the same address.
func (p *Proxy) Start(tb testing.TB) {
	tb.Helper()
	ln, err := net.Listen("tcp", p.Addr)
	if err != nil {
		tb.Fatalf("proxy relisten on %s: %v", p.Addr, err)
	}
	p.serve(ln)
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			if !p.track(c, up) {
				return
			}
			p.wg.Go(func() { io.Copy(up, c); up.Close() })
			p.wg.Go(func() { io.Copy(c, up); c.Close() })
		}
	})
}

func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = true
	}
	p.accepted++
	return true
}

// Accepted is how many connections the proxy has passed on.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}
