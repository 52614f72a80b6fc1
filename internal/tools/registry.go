package tools

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/domaind/domaind/internal/fault"

	"github.com/domaind/domaind/internal/dnslookup"
	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/internal/httpcheck"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/seocrawl"
	"github.com/domaind/domaind/internal/tlscheck"
)

// maxURLLength bounds a URL given to a tool.
const maxURLLength = 2048

// Quotas per client and hour: a crawl fetches up to a hundred pages, the
// inline tools one target each.
const (
	crawlPerHour  = 10
	inlinePerHour = 30
)

// Deps are what the tools reach the world with.
type Deps struct {
	// Fetch is the SSRF-safe client every user-given URL goes through; the
	// tools use it hiding names (fetch.Client.HidingNames).
	Fetch *fetch.Client
	// DNS is the resolver dns-lookup asks.
	DNS *dnslookup.Resolver
	// Registry answers domain-suggest's availability checks.
	Registry registry.Provider
	// Roots verify ssl-check's certificate chains; nil means the system's.
	Roots *x509.CertPool
}

// New returns the registry of the free tools.
func New(d Deps) *Registry {
	if d.Fetch != nil {
		d.Fetch = d.Fetch.HidingNames()
	}
	r := &Registry{bySlug: map[string]Tool{}}
	r.add(define(Tool{Slug: "seo-crawl", Async: true, PerHour: crawlPerHour},
		func(ctx context.Context, in *crawlInput) error { return checkCrawl(ctx, d.Fetch, in) },
		func(ctx context.Context, in crawlInput, progress Progress) (any, error) {
			return seocrawl.Crawl(ctx, d.Fetch, in.URL, seocrawl.Options{MaxPages: *in.MaxPages}, seocrawl.Progress(progress))
		}))
	r.add(define(Tool{Slug: "dns-lookup", TTL: 5 * time.Minute, PerHour: inlinePerHour},
		checkHostInput,
		func(ctx context.Context, in hostInput, _ Progress) (any, error) {
			res, err := dnslookup.Lookup(ctx, d.DNS, in.Domain)
			if err != nil {
				return nil, &Failure{Public: "the DNS resolver did not answer; try again shortly", Err: err}
			}
			return res, nil
		}))
	r.add(define(Tool{Slug: "http-headers", TTL: 5 * time.Minute, PerHour: inlinePerHour},
		func(ctx context.Context, in *urlInput) error { return checkURL(ctx, d.Fetch, in) },
		func(ctx context.Context, in urlInput, _ Progress) (any, error) {
			return httpcheck.Check(ctx, d.Fetch, in.URL)
		}))
	r.add(define(Tool{Slug: "ssl-check", TTL: 10 * time.Minute, PerHour: inlinePerHour},
		checkTLSInput,
		func(ctx context.Context, in tlsInput, _ Progress) (any, error) {
			return tlscheck.Check(ctx, d.Fetch, in.Host, in.Port, d.Roots, time.Now())
		}))
	r.add(define(Tool{Slug: SuggestSlug, TTL: 2 * time.Minute, PerHour: inlinePerHour},
		checkSuggest,
		func(ctx context.Context, in SuggestInput, _ Progress) (any, error) {
			return suggest(ctx, d.Registry, in)
		}))
	return r
}

type urlInput struct {
	URL string `json:"url"`
}

// checkURL validates a URL to fetch and refuses one the fetch client would
// not reach. Its host is an IP address or a public name, written in ASCII:
// fetch.PublicHost, the rule the client holds each of its requests to
// (redirects and crawled pages), so that a target and what it leads to
// pass the same test.
func checkURL(ctx context.Context, c *fetch.Client, in *urlInput) error {
	if strings.TrimSpace(in.URL) == "" {
		return fault.Invalid("url", "is required, e.g. https://example.com/")
	}
	if len(in.URL) > maxURLLength {
		return fault.Invalid("url", "is %d characters; at most %d", len(in.URL), maxURLLength)
	}
	u, err := fetch.ParseURL(in.URL)
	if err != nil {
		return err
	}
	host, err := fetch.PublicHost(u.Hostname())
	if err != nil {
		return fault.Invalid("url", "%v", err)
	}
	if host != u.Hostname() { // a name, not in its ASCII form
		if port := u.Port(); port != "" {
			u.Host = net.JoinHostPort(host, port)
		} else {
			u.Host = host
		}
	}
	u, err = c.Check(ctx, u.String())
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr): // for now, maybe: not kept for the request's Idempotency-Key
		e := fault.Invalid("url", "%s could not be resolved (its DNS did not answer); try again later", host)
		e.Err = fault.ErrRetryLater
		return e
	case err != nil:
		return err
	}
	in.URL = u.String()
	return nil
}

type tlsInput struct {
	Host string `json:"host"`
	Port int    `json:"port,omitempty"`
}

func checkTLSInput(_ context.Context, in *tlsInput) error {
	if strings.TrimSpace(in.Host) == "" {
		return fault.Invalid("host", "is required: the server's name, e.g. example.com")
	}
	h, err := publicName("host", in.Host)
	if err != nil {
		return err
	}
	in.Host = h
	switch {
	case in.Port == 0:
		in.Port = 443
	case in.Port < 1 || in.Port > 65535:
		return fault.Invalid("port", "must be from 1 to 65535")
	}
	return nil
}

type crawlInput struct {
	URL string `json:"url"`
	// MaxPages is the pages to fetch at most; nil asks for the default, 0
	// is out of range, as everywhere (checkCrawl sets it).
	MaxPages *int `json:"max_pages,omitempty"`
}

// checkCrawl validates a crawl and refuses a start the fetch client would
// not reach, so a refused target never becomes a job.
func checkCrawl(ctx context.Context, c *fetch.Client, in *crawlInput) error {
	if err := inRange(&in.MaxPages, "max_pages", seocrawl.DefaultMaxPages, seocrawl.MaxPagesLimit); err != nil {
		return err
	}
	u := urlInput{URL: in.URL}
	if err := checkURL(ctx, c, &u); err != nil {
		return err
	}
	in.URL = u.URL
	return nil
}

type hostInput struct {
	Domain string `json:"domain"`
}

// checkHostInput takes a public name only (see publicName).
func checkHostInput(_ context.Context, in *hostInput) error {
	if strings.TrimSpace(in.Domain) == "" {
		return fault.Invalid("domain", "is required, e.g. example.com")
	}
	d, err := publicName("domain", in.Domain)
	if err != nil {
		return err
	}
	in.Domain = d
	return nil
}

// publicName returns the ASCII form of host, a name under a public suffix
// ("example.com", "www.example.co.uk"), or a validation error of field.
// Every name a tool is given passes it first, so that no resolver is asked
// about the service's own network (redis, redis.svc.cluster.local) and the
// answer cannot tell whether such a name exists. (A URL's host may also be
// an IP address: checkURL holds it to fetch.PublicHost, which is this rule
// and that.)
func publicName(field, host string) (string, error) {
	n, err := domainname.Parse(host)
	if err != nil {
		return "", fault.Invalid(field, "%v", err)
	}
	return n.ASCII, nil
}

// inRange checks the optional count *n of field: nil takes def, and a
// count is from 1 to max (0 is out of range, as everywhere).
func inRange(n **int, field string, def, max int) error {
	switch {
	case *n == nil:
		*n = &def
	case **n < 1 || **n > max:
		return fault.Invalid(field, "must be from 1 to %d", max)
	}
	return nil
}
