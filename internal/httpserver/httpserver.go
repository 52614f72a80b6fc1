// Package httpserver builds the service's HTTP servers so that a slow or
// greedy client cannot hold them: every phase of a request has a deadline
// (headers, body, answer, the idle time between requests), and one client
// address holds a bounded number of connections. Routes that answer for
// longer (the search's stream) set their own write deadlines through
// http.ResponseController.
package httpserver

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Defaults of the server's deadlines and the per-client connection cap.
const (
	// ReadHeaderTimeout bounds the request line and headers.
	ReadHeaderTimeout = 10 * time.Second
	// ReadTimeout bounds the whole request, body included: a body sent a
	// byte a minute is cut off.
	ReadTimeout = 30 * time.Second
	// WriteTimeout bounds an answer from the end of its request's headers;
	// routes that need longer extend it for themselves.
	WriteTimeout = 30 * time.Second
	// IdleTimeout closes a kept-alive connection that sends nothing.
	IdleTimeout = 60 * time.Second
	// MaxConnsPerClient is how many connections one client address may hold
	// open at once (browsers open 6 per host; API clients a pool).
	MaxConnsPerClient = 64
)

// Options tune a server; zero values take the defaults above.
type Options struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
}

// New returns an http.Server for h with the deadlines of opts.
func New(h http.Handler, log *slog.Logger, opts Options) *http.Server {
	pick := func(v, def time.Duration) time.Duration {
		if v == 0 {
			return def
		}
		return v
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: pick(opts.ReadHeaderTimeout, ReadHeaderTimeout),
		ReadTimeout:       pick(opts.ReadTimeout, ReadTimeout),
		WriteTimeout:      pick(opts.WriteTimeout, WriteTimeout),
		IdleTimeout:       pick(opts.IdleTimeout, IdleTimeout),
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// ClientKey is the identity of a client address for limits: the address
// for IPv4, its /64 for IPv6 (one subscriber usually holds a whole /64).
func ClientKey(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "unknown"
	case a.Is4():
		return a.String()
	default:
		p, _ := a.Prefix(64)
		return p.String()
	}
}

// LimitListener returns ln accepting at most perClient open connections
// from one client address (ClientKey); the connection past the cap is
// closed as soon as it is accepted. Connections from trusted proxies are
// not counted: every client behind them shares their address.
func LimitListener(ln net.Listener, perClient int, trusted []netip.Prefix) net.Listener {
	if perClient <= 0 {
		perClient = MaxConnsPerClient
	}
	return &limitListener{Listener: ln, perClient: perClient, trusted: trusted, open: map[string]int{}}
}

type limitListener struct {
	net.Listener
	perClient int
	trusted   []netip.Prefix

	mu   sync.Mutex
	open map[string]int
}

// Accept returns the next connection within its client's cap.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := remoteAddr(conn)
		if l.isTrusted(addr) {
			return conn, nil
		}
		key := ClientKey(addr)
		l.mu.Lock()
		full := l.open[key] >= l.perClient
		if !full {
			l.open[key]++
		}
		l.mu.Unlock()
		if full {
			conn.Close()
			continue
		}
		return &countedConn{Conn: conn, release: func() { l.release(key) }}, nil
	}
}

func (l *limitListener) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key]--; l.open[key] <= 0 {
		delete(l.open, key)
	}
}

func (l *limitListener) isTrusted(a netip.Addr) bool {
	for _, p := range l.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func remoteAddr(conn net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(conn.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// countedConn gives its place back once, when it is closed.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
