// Package whois is the port-43 WHOIS client the lookups fall back to when a
// TLD has no RDAP server or RDAP fails: it asks IANA which server holds the
// TLD, asks that server in the form it answers (quirks.go), follows one
// referral to the registrar for thin registries, and reads the answer into
// a domaininfo.Record by its layout family (parse.go): "Key: Value" lines,
// indented blocks under a heading, bracketed and dotted keys, keys in
// several languages. Its figures on a corpus of real answers from over a
// hundred registries are printed by TestCorpus.
package whois

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/domaind/domaind/internal/domaininfo"
	"github.com/domaind/domaind/internal/hostlimit"
)

// Defaults of a Client.
const (
	DefaultTimeout   = 10 * time.Second
	DefaultMaxSize   = 256 << 10
	DefaultPerServer = 4
	// referralTTL is how long IANA's answer for a TLD is remembered.
	referralTTL = 24 * time.Hour
)

// DialFunc opens a connection, like net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Client asks WHOIS servers. It is safe for concurrent use.
type Client struct {
	iana      string
	dialFunc  DialFunc
	timeout   time.Duration
	maxSize   int64
	perServer int
	servers   *hostlimit.Limiter
	throttle  func(ctx context.Context, server string) error

	mu        sync.Mutex
	referrals map[string]referral // TLD → its WHOIS server
}

type referral struct {
	server string
	at     time.Time
}

// Option configures a Client.
type Option func(*Client)

// WithDialer routes connections through dial: in production the SSRF-safe
// dialer of internal/fetch, which refuses loopback, private and link-local
// addresses whatever a referral's name resolves to; tests map host names to
// local listeners.
func WithDialer(dial DialFunc) Option { return func(c *Client) { c.dialFunc = dial } }

// WithTimeout bounds one query, connection included.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithMaxSize bounds the answer read from one server.
func WithMaxSize(n int64) Option { return func(c *Client) { c.maxSize = n } }

// WithThrottle asks allow before each query to a server (host:port); an
// error refuses the query (the server's query budget is spent).
func WithThrottle(allow func(ctx context.Context, server string) error) Option {
	return func(c *Client) { c.throttle = allow }
}

// WithPerServer bounds the queries one server gets at once.
func WithPerServer(n int) Option { return func(c *Client) { c.perServer = n } }

// New returns a Client whose referrals start at ianaAddr (host:port).
func New(ianaAddr string, opts ...Option) *Client {
	c := &Client{
		iana: ianaAddr, dialFunc: (&net.Dialer{}).DialContext,
		timeout: DefaultTimeout, maxSize: DefaultMaxSize, perServer: DefaultPerServer,
		throttle:  func(context.Context, string) error { return nil },
		referrals: map[string]referral{},
	}
	for _, o := range opts {
		o(c)
	}
	c.servers = hostlimit.New(c.perServer)
	return c
}

// Lookup returns the registration data of domain (lower-case ASCII). A "no
// match" answer wraps domaininfo.ErrNotFound. When the registry names a
// registrar WHOIS server, it is asked once; its answer adds the registrant
// and contacts, and its failure leaves the registry's answer as it is.
func (c *Client) Lookup(ctx context.Context, domain string) (domaininfo.Record, error) {
	i := strings.LastIndexByte(domain, '.')
	if i < 0 {
		return domaininfo.Record{}, fmt.Errorf("whois: %q has no TLD", domain)
	}
	server, err := c.tldServer(ctx, domain[i+1:])
	if err != nil {
		return domaininfo.Record{}, err
	}
	text, err := c.query(ctx, server, question(domain))
	if err != nil {
		return domaininfo.Record{}, err
	}
	a, err := parse(domain, text)
	if err != nil {
		return a.rec, err
	}
	if a.referral == "" || strings.EqualFold(a.referral, server) || ipLiteral(a.referral) {
		return a.rec, nil // an address in an answer is not followed: see ipLiteral
	}
	more, err := c.query(ctx, a.referral, domain)
	if err != nil {
		return a.rec, nil
	}
	if b, err := parse(domain, more); err == nil {
		return a.rec.AddRegistrar(b.rec), nil
	}
	return a.rec, nil
}

// tldServer returns the WHOIS server of tld, asking IANA once a day.
func (c *Client) tldServer(ctx context.Context, tld string) (string, error) {
	c.mu.Lock()
	r, ok := c.referrals[tld]
	c.mu.Unlock()
	if ok && time.Since(r.at) < referralTTL {
		return r.server, nil
	}
	text, err := c.query(ctx, c.iana, tld)
	if err != nil {
		return "", fmt.Errorf("whois: ask IANA about .%s: %w", tld, err)
	}
	server := ianaReferral(text)
	if server == "" || ipLiteral(server) {
		return "", fmt.Errorf("whois: IANA names no WHOIS server for .%s", tld)
	}
	c.mu.Lock()
	c.referrals[tld] = referral{server: server, at: time.Now()}
	c.mu.Unlock()
	return server, nil
}

// ianaReferral reads the "refer:" (or "whois:") line of IANA's answer.
func ianaReferral(text []byte) string {
	for line := range strings.Lines(string(text)) {
		key, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "refer", "whois":
			if addr := serverAddr(value); addr != "" {
				return addr
			}
		}
	}
	return ""
}

// ipLiteral reports whether a referral (host:port) names an IP address
// rather than a server name. Registries refer by name; an address in an
// answer, which the service did not write, is how a hostile or intercepted
// answer would point the service at its own network, so it is not asked.
func ipLiteral(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	_, err = netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil
}

// query sends one question to a WHOIS server and reads the answer to EOF
// or the size cap.
func (c *Client) query(ctx context.Context, server, question string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	release, err := c.servers.Acquire(ctx, server)
	if err != nil {
		return nil, fmt.Errorf("whois: %w", err)
	}
	defer release()
	if err := c.throttle(ctx, server); err != nil {
		return nil, fmt.Errorf("whois %s: %w", server, err)
	}
	conn, err := c.dialFunc(ctx, "tcp", server)
	if err != nil {
		return nil, fmt.Errorf("whois %s: %w", server, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) }) // unblock on cancel
	defer stop()
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	}
	if _, err := io.WriteString(conn, question+"\r\n"); err != nil {
		return nil, fmt.Errorf("whois %s: %w", server, contextErr(ctx, err))
	}
	text, err := io.ReadAll(io.LimitReader(conn, c.maxSize))
	if err != nil {
		return nil, fmt.Errorf("whois %s: %w", server, contextErr(ctx, err))
	}
	return text, nil
}

// contextErr prefers the context's reason over the deadline error it caused.
func contextErr(ctx context.Context, err error) error {
	var ne net.Error
	if ctx.Err() != nil && errors.As(err, &ne) && ne.Timeout() {
		return ctx.Err()
	}
	return err
}
