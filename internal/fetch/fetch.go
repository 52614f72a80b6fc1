// Package fetch is the one way the service fetches URLs that users give
// (SEO crawls, header and TLS checks, partners' webhook receivers): an HTTP
// client that will not be turned against the service's own network (SSRF).
//
// Every connection is checked where it is made, in the dialer, against the
// address actually dialled: loopback, private, link-local (cloud metadata
// at 169.254.169.254 included), CGNAT, multicast, unspecified and other
// special-purpose ranges are refused, whatever name led there, after every
// redirect, and however DNS answers between a check and the connection
// (rebinding). A client that hides names (for the free tools) reaches only
// IP addresses and names under a public suffix (PublicHost), whether given
// or met in a redirect, and looks names up fully qualified, so that the
// names of the service's own network are never tried: neither as written
// (intranet, printer.local) nor completed by its search domains. Only http
// and https are fetched, redirects are bounded, and so are the time and
// the bytes read of a header and of a body. Networks listed as allowed
// (tests' local servers, through DOMAIND_FETCH_ALLOW_CIDRS) are exempt from
// the address rules; a client that hides names still reaches only IP
// addresses and public names there.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/domaind/domaind/internal/domainname"
)

// Defaults of Options.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultMaxBody      = 2 << 20
	DefaultMaxRedirects = 5
)

// MaxHeaderBytes bounds the header of a response: a larger one is an
// error ("server response headers exceeded 65536 bytes"), never read whole.
const MaxHeaderBytes = 64 << 10

// BlockedError is a target the client refuses to reach. Its message may be
// shown to whoever gave the target: it names the target as given and says
// why in general terms (a private address, a loopback address…), never
// the address a name resolved to, which would map our network for them.
// Detail, for logs only, has the address.
type BlockedError struct {
	Target string // the URL or host as given; empty when only the dialler knew
	Reason string
	Detail string
}

// Error names the target in at most maxTargetShown bytes, so that the
// reason survives wherever the message is cut to fit (a job's error).
func (e *BlockedError) Error() string {
	if e.Target == "" {
		return "refused to fetch: " + e.Reason
	}
	return fmt.Sprintf("refused to fetch %s: %s", shown(e.Target), e.Reason)
}

// maxTargetShown is how much of a target, or of a host named in a reason,
// a refusal shows: enough to know it by (a URL may be 2,048 characters,
// and a host in a redirect's Location longer still).
const maxTargetShown = 200

// shown is s cut to maxTargetShown bytes, with no character cut in two.
func shown(s string) string {
	if len(s) <= maxTargetShown {
		return s
	}
	return strings.ToValidUTF8(s[:maxTargetShown], "") + "…"
}

// Resolver looks host names up; net.DefaultResolver is one. A client that
// hides names asks it for fully qualified names, which end in a dot.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a Client; zero values take the defaults.
type Options struct {
	Allow        []netip.Prefix // networks exempt from the guard (tests)
	Timeout      time.Duration  // whole request, redirects included
	MaxBody      int64          // bytes read of a body
	MaxRedirects int
	Resolver     Resolver
	UserAgent    string
	// HTTPSRedirectsOnly refuses a redirect to a plain http URL (for
	// protocols whose answers must not be downgraded, such as RDAP).
	HTTPSRedirectsOnly bool
	// NoRedirects answers a redirect as it is, without following it (for
	// webhook deliveries: a 3xx is not an acknowledgement, and following
	// it would turn the POST into a GET).
	NoRedirects bool
}

// Client fetches user-given URLs safely.
type Client struct {
	opts      Options
	hideNames bool // see HidingNames
	dialer    *net.Dialer
	http      *http.Client
}

// New returns a Client with opts.
func New(opts Options) *Client {
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBody == 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.MaxRedirects == 0 {
		opts.MaxRedirects = DefaultMaxRedirects
	}
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "domaind-fetch/1 (+https://github.com/domaind/domaind)"
	}
	c := &Client{opts: opts}
	c.dialer = &net.Dialer{Timeout: 5 * time.Second, Control: c.control}
	transport := &http.Transport{
		Proxy:                  nil, // a proxy would dial for us, past the guard
		DialContext:            c.DialContext,
		TLSHandshakeTimeout:    5 * time.Second,
		ResponseHeaderTimeout:  opts.Timeout,
		MaxResponseHeaderBytes: MaxHeaderBytes,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        30 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	c.http = &http.Client{Transport: transport, Timeout: opts.Timeout, CheckRedirect: c.checkRedirect}
	return c
}

// checkRedirect refuses a redirect the client does not follow. A host a
// client that hides names does not reach is refused here, naming the
// redirect's URL, rather than at the connection, which knows only the host.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	switch {
	case c.opts.NoRedirects:
		return http.ErrUseLastResponse
	case len(via) > c.opts.MaxRedirects:
		return &BlockedError{Target: req.URL.Redacted(), Reason: fmt.Sprintf("more than %d redirects", c.opts.MaxRedirects)}
	case c.opts.HTTPSRedirectsOnly && req.URL.Scheme != "https":
		return &BlockedError{Target: req.URL.Redacted(), Reason: "redirects are followed to https URLs only"}
	}
	if err := checkURL(req.URL); err != nil {
		return err
	}
	if _, err := c.lookupName(req.URL.Hostname()); err != nil {
		return named(err, req.URL.Redacted())
	}
	return nil
}

// HidingNames returns a client with c's options that refuses a name that
// does not resolve exactly as it refuses a name that resolves to a refused
// address, so that whoever gives it names cannot tell which ones the
// service's own network has: for targets anyone may give (the free tools).
// It reaches only hosts that PublicHost takes, whether given or met in a
// redirect, and refuses any other name as written, without looking it up.
// An IP address is still refused with the kind of address it is.
func (c *Client) HidingNames() *Client {
	h := New(c.opts)
	h.hideNames = true
	return h
}

// HTTP returns the guarded *http.Client, for callers that need its
// redirects or TLS state themselves (it follows the same rules as Get).
func (c *Client) HTTP() *http.Client { return c.http }

// MaxBody is how many bytes of a body the client reads.
func (c *Client) MaxBody() int64 { return c.opts.MaxBody }

// ParseURL refuses a URL the client never fetches, whatever its host
// resolves to: not http(s), no host, credentials, or a numeric host in a
// non-standard form. It resolves nothing.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return nil, &BlockedError{Target: raw, Reason: "not an absolute http(s) URL"}
	}
	if err := checkURL(u); err != nil {
		return nil, err
	}
	return u, nil
}

// Check refuses a URL before any work starts on it: what ParseURL refuses,
// or a host that resolves to a refused address. (The dialer checks again
// at every connection.)
func (c *Client) Check(ctx context.Context, raw string) (*url.URL, error) {
	u, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	host := u.Hostname()
	addrs, err := c.resolve(ctx, host)
	if err != nil {
		return nil, c.unresolved(u.Redacted(), host, err)
	}
	for _, a := range addrs {
		if reason := c.refused(a); reason != "" {
			return nil, c.refusal(u.Redacted(), host, a, fmt.Sprintf("%s resolves to %s", host, reason))
		}
	}
	return u, nil
}

// Exempt reports whether every address the host of raw resolves to is in
// a network exempt from the guard (DOMAIND_FETCH_ALLOW_CIDRS): a test's
// own server, which callers may hold to laxer rules (plain http).
func (c *Client) Exempt(ctx context.Context, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" || len(c.opts.Allow) == 0 {
		return false
	}
	addrs, err := c.resolve(ctx, u.Hostname())
	if err != nil {
		return false
	}
	for _, a := range addrs {
		allowed := false
		for _, p := range c.opts.Allow {
			allowed = allowed || p.Contains(a.Unmap())
		}
		if !allowed {
			return false
		}
	}
	return true
}

// Get fetches raw and returns the response with at most MaxBody bytes of
// its body read (truncated reports whether there was more).
func (c *Client) Get(ctx context.Context, raw string) (res *http.Response, body []byte, truncated bool, err error) {
	u, err := c.Check(ctx, raw)
	if err != nil {
		return nil, nil, false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, false, err
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	res, err = c.http.Do(req)
	if err != nil {
		return nil, nil, false, unwrapBlocked(err, u)
	}
	defer res.Body.Close()
	body, err = io.ReadAll(io.LimitReader(res.Body, c.opts.MaxBody+1))
	if int64(len(body)) > c.opts.MaxBody {
		body, truncated = body[:c.opts.MaxBody], true
	}
	return res, body, truncated, err
}

// Do sends req through the guard (for methods other than GET, such as a
// webhook's POST). The caller closes the body.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	if _, err := c.Check(req.Context(), req.URL.String()); err != nil {
		return nil, err
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", c.opts.UserAgent)
	}
	res, err := c.http.Do(req)
	return res, unwrapBlocked(err, req.URL)
}

// unwrapBlocked digs a *BlockedError out of the url.Error net/http wraps it
// in, naming the URL asked for when the dialler could not.
func unwrapBlocked(err error, asked *url.URL) error {
	var be *BlockedError
	if !errors.As(err, &be) {
		return err
	}
	return named(be, asked.Redacted())
}

// named is err with target named, when err is a *BlockedError that names
// none (the dialler's, or a refusal of a host); any other err is returned
// as it is.
func named(err error, target string) error {
	be, ok := err.(*BlockedError)
	if !ok || be.Target != "" {
		return err
	}
	n := *be
	n.Target = target
	return &n
}

func checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return &BlockedError{Target: u.Redacted(), Reason: "only http and https URLs are fetched"}
	}
	if u.User != nil {
		return &BlockedError{Target: u.Redacted(), Reason: "URLs with credentials are not fetched"}
	}
	host := u.Hostname()
	if host == "" {
		return &BlockedError{Target: u.Redacted(), Reason: "no host"}
	}
	if numericForm(host) {
		if _, err := netip.ParseAddr(host); err != nil {
			return &BlockedError{Target: u.Redacted(), Reason: "a numeric host must be a plain IP address (no decimal, octal or hex forms)"}
		}
	}
	return nil
}

// numericForm reports whether host is meant as a number rather than a name:
// its last label is all digits or a 0x number (no TLD is). Such hosts are
// taken only in the standard IP notations, since resolvers read the others
// (2130706433, 0177.1, 0x7f.1) as addresses in ways that differ.
func numericForm(host string) bool {
	if strings.Contains(host, ":") { // IPv6 literal
		return false
	}
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if strings.HasPrefix(strings.ToLower(last), "0x") {
		return true
	}
	_, err := strconv.ParseUint(last, 10, 64)
	return err == nil
}

// PublicHost returns host as a client that hides names reaches it: an IP
// address as it is, or a name under a public suffix ("example.com",
// "www.example.co.uk", with or without its trailing dot) in its ASCII
// form. Any other name (intranet, printer.local, redis.svc.cluster.local)
// is refused with the *domainname.Error that says why, judged on the name
// as written: nothing is looked up, so the answer cannot tell which names
// the service's own network has. The free tools hold their targets to it
// too, so that a target and every request made for it follow one rule.
func PublicHost(host string) (string, error) {
	if _, err := netip.ParseAddr(host); err == nil {
		return host, nil
	}
	n, err := domainname.Parse(host)
	if err != nil {
		return "", err
	}
	return n.ASCII, nil
}

// notPublicReason is why a client that hides names refuses a host that
// PublicHost does not take.
const notPublicReason = "is not an IP address or a name under a public suffix"

// lookupName is the name the resolver is asked for host, or the refusal
// of host, naming no target (the caller names it). A client that hides
// names asks only for a host PublicHost takes, in the ASCII form it
// checked, fully qualified, so that a search domain of the service's
// network never completes it ("redis" into redis.default.svc.cluster.local).
// The others ask for host as given, so that a name of the hosts file or of
// the search domains (localhost, a receiver or a registry server named by
// an operator) is found.
func (c *Client) lookupName(host string) (string, error) {
	if !c.hideNames {
		return host, nil
	}
	name, err := PublicHost(host)
	if err != nil {
		return "", &BlockedError{Reason: shown(host) + " " + notPublicReason, Detail: err.Error()}
	}
	return name + ".", nil
}

// resolve returns the addresses of host. An IP address is its own; a name
// is looked up as lookupName says, or refused as it says.
func (c *Client) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	name, err := c.lookupName(host)
	if err != nil {
		return nil, err
	}
	addrs, err := c.opts.Resolver.LookupNetIP(ctx, "ip", name)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, withoutServer(err))
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: %w", host, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true})
	}
	return addrs, nil
}

// hiddenReason is why a client that hides names refuses a name, in the
// same words whether it does not resolve or resolves to a refused address.
const hiddenReason = "does not resolve, or not to a public address"

// unresolved is what Check and DialContext answer for target when its
// host did not resolve: err (a refusal of the host naming target), or,
// when the name does not exist and the client hides names, the refusal of
// a hidden name.
func (c *Client) unresolved(target, host string, err error) error {
	var de *net.DNSError
	if c.hideNames && errors.As(err, &de) && de.IsNotFound {
		return &BlockedError{Target: target, Reason: shown(host) + " " + hiddenReason, Detail: err.Error()}
	}
	return named(err, target)
}

// refusal refuses target, whose host resolves to the refused address a,
// for reason; a client that hides names refuses a name as one that does
// not resolve.
func (c *Client) refusal(target, host string, a netip.Addr, reason string) *BlockedError {
	if _, err := netip.ParseAddr(host); err != nil && c.hideNames {
		reason = shown(host) + " " + hiddenReason
	}
	return &BlockedError{Target: target, Reason: reason, Detail: fmt.Sprintf("%s resolves to %s", host, a)}
}

// withoutServer drops the resolver's address from a DNS error: the error
// may reach the user who gave the URL, and the address is of our network.
func withoutServer(err error) error {
	var de *net.DNSError
	if !errors.As(err, &de) || de.Server == "" {
		return err
	}
	clean := *de
	clean.Server = ""
	return &clean
}

// DialContext connects to addr (host:port) through the guard the HTTP
// client dials through, for protocols other than HTTP (a TLS handshake):
// the host is resolved with the client's resolver, the first address that
// is not refused is dialled, and the dialer's Control checks the socket's
// address again as it connects.
func (c *Client) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	addrs, err := c.resolve(ctx, host)
	if err != nil {
		return nil, c.unresolved(host, host, err)
	}
	var firstErr error
	for _, a := range addrs {
		if reason := c.refused(a); reason != "" {
			if firstErr == nil {
				firstErr = c.refusal(host, host, a, "it resolves to "+reason)
			}
			continue
		}
		conn, err := c.dialer.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// control is the last check, on the address the socket connects to.
func (c *Client) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedError{Reason: "not an IP address", Detail: address}
	}
	if reason := c.refused(ap.Addr()); reason != "" {
		return &BlockedError{Reason: "it resolves to " + reason, Detail: "dialled " + address}
	}
	return nil
}

// specialPurpose are ranges no user-given URL may reach beyond what
// netip's predicates cover (RFC 6890 and friends).
var specialPurpose = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a 'this network' address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("64:ff9b::/96"), "a NAT64 address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a NAT64 address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("2002::/16"), "a 6to4 address"},
	{netip.MustParsePrefix("100::/64"), "a discard address"},
	// IPv6 forms that carry an IPv4 address some stacks would reach.
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible address"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "an IPv4-translated address"},
	{netip.MustParsePrefix("2001::/32"), "a Teredo address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
}

// refused says why the client will not connect to a ("" when it will).
func (c *Client) refused(a netip.Addr) string {
	a = a.Unmap()
	for _, p := range c.opts.Allow {
		if p.Contains(a) {
			return ""
		}
	}
	switch {
	case !a.IsValid():
		return "not an address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast():
		return "a link-local address (cloud metadata lives there)"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "a multicast address"
	case a.IsUnspecified():
		return "an unspecified address"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "the broadcast address"
	}
	for _, s := range specialPurpose {
		if s.prefix.Contains(a) {
			return s.what
		}
	}
	return ""
}
