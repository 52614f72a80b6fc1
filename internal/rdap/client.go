// Package rdap is an RDAP client for domain registration data: it finds
// the TLD's server in IANA's bootstrap file, asks it about a domain, and
// follows the registry's "related" link to the registrar's RDAP server,
// where thin registries (.com, .net) keep the registrant. Answers are read
// into a domaininfo.Record.
package rdap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/domaind/domaind/internal/domaininfo"
	"github.com/domaind/domaind/internal/hostlimit"
)

// ErrNoServer means the bootstrap names no RDAP server for the TLD; the
// caller falls back to WHOIS.
var ErrNoServer = errors.New("rdap: no RDAP server for this TLD")

// maxAnswerSize bounds one RDAP answer.
const maxAnswerSize = 1 << 20

// DefaultPerHost is how many requests one RDAP server gets at once from
// one client; registries rate-limit eager clients.
const DefaultPerHost = 4

// HTTPError is an RDAP server's unexpected HTTP status.
type HTTPError struct {
	URL    string
	Status int
}

func (e *HTTPError) Error() string {
	switch {
	case e.Status == http.StatusTooManyRequests:
		return fmt.Sprintf("rdap %s: HTTP 429, the server is rate limiting", e.URL)
	case e.Status >= 500:
		return fmt.Sprintf("rdap %s: HTTP %d, server error", e.URL, e.Status)
	}
	return fmt.Sprintf("rdap %s: HTTP %d", e.URL, e.Status)
}

// Doer sends one HTTP request. In production it is the SSRF-safe
// *fetch.Client, so that neither a registry's links nor its redirects can
// point the service at its own network; tests map names to local servers.
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// ThrottleFunc is asked before each request to a server (by host name)
// and refuses it with an error when the server's query budget is spent.
type ThrottleFunc func(ctx context.Context, server string) error

// Client asks RDAP servers. Its Doer carries the timeouts and the guard.
type Client struct {
	hc        Doer
	bootstrap atomic.Pointer[Bootstrap]
	hosts     *hostlimit.Limiter
	throttle  ThrottleFunc
}

// New returns a Client sending through hc with bootstrap b, at most perHost
// requests at once to one server (DefaultPerHost when perHost < 1), each
// request first allowed by throttle (nil allows all).
func New(hc Doer, b *Bootstrap, perHost int, throttle ThrottleFunc) *Client {
	if perHost < 1 {
		perHost = DefaultPerHost
	}
	if throttle == nil {
		throttle = func(context.Context, string) error { return nil }
	}
	c := &Client{hc: hc, hosts: hostlimit.New(perHost), throttle: throttle}
	c.bootstrap.Store(b)
	return c
}

// SetBootstrap replaces the bootstrap (a refreshed copy from IANA).
func (c *Client) SetBootstrap(b *Bootstrap) { c.bootstrap.Store(b) }

// Bootstrap is the bootstrap in use.
func (c *Client) Bootstrap() *Bootstrap { return c.bootstrap.Load() }

// Server returns the base URL that is asked about domain, or ErrNoServer.
func (c *Client) Server(domain string) (*url.URL, error) {
	i := strings.LastIndexByte(domain, '.')
	if i < 0 {
		return nil, fmt.Errorf("rdap: %q has no TLD: %w", domain, ErrNoServer)
	}
	urls := c.Bootstrap().Servers(domain[i+1:])
	if len(urls) == 0 {
		return nil, fmt.Errorf("rdap: .%s: %w", domain[i+1:], ErrNoServer)
	}
	return urls[0], nil
}

// Lookup returns the registration data of domain (lower-case ASCII). A 404
// from the TLD's server wraps domaininfo.ErrNotFound. The registrar's answer
// fills in what the registry's lacks; when it fails, the registry's answer
// is returned as it is.
func (c *Client) Lookup(ctx context.Context, domain string) (domaininfo.Record, error) {
	base, err := c.Server(domain)
	if err != nil {
		return domaininfo.Record{}, err
	}
	self := base.JoinPath("domain", domain)
	rec, links, err := c.fetch(ctx, self.String())
	var he *HTTPError
	if errors.As(err, &he) && he.Status == http.StatusNotFound {
		return rec, fmt.Errorf("rdap %s: %w", domain, domaininfo.ErrNotFound)
	}
	if err != nil {
		return rec, err
	}
	if related := relatedLink(links, self); related != "" {
		if more, _, err := c.fetch(ctx, related); err == nil {
			rec = rec.AddRegistrar(more)
		}
	}
	return rec, nil
}

// relatedLink is the registrar RDAP URL a registry answer points to, or "".
// Only https links are taken: the answer is not ours, and a plain http
// link could be read or changed on the way.
func relatedLink(links []link, self *url.URL) string {
	for _, l := range links {
		if !strings.EqualFold(l.Rel, "related") {
			continue
		}
		u, err := url.Parse(l.Href)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
			continue
		}
		if !strings.Contains(strings.ToLower(l.Type), "rdap") && !strings.Contains(strings.ToLower(u.Path), "/domain/") {
			continue
		}
		if strings.EqualFold(u.String(), self.String()) {
			continue
		}
		return u.String()
	}
	return ""
}

// fetch GETs one RDAP URL, holding one of its host's slots.
func (c *Client) fetch(ctx context.Context, rawURL string) (domaininfo.Record, []link, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return domaininfo.Record{}, nil, fmt.Errorf("rdap %s: %w", rawURL, err)
	}
	req.Header.Set("Accept", "application/rdap+json, application/json")
	release, err := c.hosts.Acquire(ctx, req.URL.Host)
	if err != nil {
		return domaininfo.Record{}, nil, fmt.Errorf("rdap: %w", err)
	}
	defer release()
	if err := c.throttle(ctx, req.URL.Hostname()); err != nil {
		return domaininfo.Record{}, nil, fmt.Errorf("rdap %s: %w", req.URL.Hostname(), err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return domaininfo.Record{}, nil, fmt.Errorf("rdap: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return domaininfo.Record{}, nil, &HTTPError{URL: rawURL, Status: resp.StatusCode}
	}
	data, err := readLimited(resp.Body, maxAnswerSize)
	if err != nil {
		return domaininfo.Record{}, nil, fmt.Errorf("rdap %s: %w", rawURL, err)
	}
	rec, links, err := parse(data)
	if err != nil {
		return rec, nil, fmt.Errorf("rdap %s: %w", rawURL, err)
	}
	return rec, links, nil
}
