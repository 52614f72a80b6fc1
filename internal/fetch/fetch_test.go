package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeDNS answers names from a table; a name mapped to several answers
// gives them in turn (DNS rebinding).
type fakeDNS struct {
	answers map[string][]string
	calls   atomic.Int64
}

func (f *fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	seq, ok := f.answers[strings.TrimSuffix(host, ".")]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n := f.calls.Add(1) - 1
	return []netip.Addr{netip.MustParseAddr(seq[min(int(n), len(seq)-1)])}, nil
}

// serveOn starts an HTTP server on ip (127.0.0.x works on Linux).
func serveOn(tb testing.TB, ip string, h http.Handler) string {
	tb.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	srv.Start()
	tb.Cleanup(srv.Close)
	return srv.URL
}

func isBlocked(err error) bool {
	var be *BlockedError
	return errors.As(err, &be)
}

func TestRefusesInternalTargets(t *testing.T) {
	c := New(Options{Resolver: &fakeDNS{answers: map[string][]string{
		"internal.example":  {"10.1.2.3"},
		"metadata.example":  {"169.254.169.254"},
		"v6local.example":   {"::1"},
		"mapped.example":    {"::ffff:127.0.0.1"},
		"cgnat.example":     {"100.64.1.1"},
		"public.example":    {"93.184.216.34"},
		"nat64.example":     {"64:ff9b::a00:1"},
		"ula.example":       {"fd00:ec2::254"},
		"multicast.example": {"224.0.0.1"},
	}}})
	ctx := context.Background()
	for _, target := range []string{
		"http://127.0.0.1/", "http://127.1.2.3:8080/x", "http://[::1]/", "http://[::ffff:127.0.0.1]/",
		"http://10.0.0.1/", "http://172.16.5.4/", "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data/",
		"http://[fe80::1]/", "http://100.64.0.1/", "http://0.0.0.0/", "http://224.0.0.1/", "http://255.255.255.255/",
		"http://[fd00:ec2::254]/", "http://internal.example/", "http://metadata.example/", "http://v6local.example/",
		"http://mapped.example/", "http://cgnat.example/", "http://nat64.example/", "http://ula.example/",
		"http://multicast.example/",
		// IPv6 forms of IPv4 addresses (compatible, translated), site-local
		// and Teredo.
		"http://[::127.0.0.1]/", "http://[::10.0.0.1]/", "http://[::ffff:0:127.0.0.1]/", "http://[::ffff:0:a9fe:a9fe]/",
		"http://[fec0::1]/", "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
		// Numbers that resolvers may read as 127.0.0.1.
		"http://2130706433/", "http://0177.0.0.1/", "http://0x7f.0.0.1/", "http://0x7f000001/", "http://127.1/", "http://017700000001/",
		// Not http(s), or not a URL.
		"file:///etc/passwd", "gopher://public.example/", "ftp://public.example/", "//public.example/", "public.example",
		"http://user:pw@public.example/",
	} {
		if _, err := c.Check(ctx, target); !isBlocked(err) {
			t.Errorf("Check(%s) = %v, want refused", target, err)
		}
	}
	if _, err := c.Check(ctx, "https://public.example/path?q=1"); err != nil {
		t.Errorf("a public URL was refused: %v", err)
	}
	if _, err := c.Check(ctx, "http://93.184.216.34:8443/"); err != nil {
		t.Errorf("a public IP on any port was refused: %v", err)
	}
}

func TestFetchesAllowedNetworksAndRefusesTheRest(t *testing.T) {
	hits := atomic.Int64{}
	ok := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "hello")
	}))
	guarded := New(Options{})
	if _, _, _, err := guarded.Get(context.Background(), ok); !isBlocked(err) {
		t.Fatalf("loopback test server fetched without an allowance: %v", err)
	}
	allowed := New(Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	res, body, _, err := allowed.Get(context.Background(), ok)
	if err != nil || res.StatusCode != 200 || string(body) != "hello" {
		t.Fatalf("allowed fetch = %v %q %v", res, body, err)
	}
	if hits.Load() != 1 {
		t.Errorf("server hit %d times, want once (the refused fetch must not connect)", hits.Load())
	}
}

func TestRedirectToARefusedAddressIsRefused(t *testing.T) {
	private := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the private server was reached")
	}))
	hop := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-private":
			http.Redirect(w, r, private+"/secret", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		default: // an endless chain
			http.Redirect(w, r, "/loop"+r.URL.Path, http.StatusFound)
		}
	}))
	c := New(Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	for _, path := range []string{"/to-private", "/to-file", "/loop"} {
		if _, _, _, err := c.Get(context.Background(), hop+path); !isBlocked(err) {
			t.Errorf("%s = %v, want refused", path, err)
		}
	}
}

// A name that resolves to a public address when checked and to a private
// one when dialled (DNS rebinding) is refused at the connection.
func TestDNSRebindingIsRefusedAtDialTime(t *testing.T) {
	dns := &fakeDNS{answers: map[string][]string{"rebind.example": {"93.184.216.34", "127.0.0.1"}}}
	c := New(Options{Resolver: dns})
	_, _, _, err := c.Get(context.Background(), "http://rebind.example/")
	if !isBlocked(err) || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("rebinding fetch = %v, want refused as loopback", err)
	}
	if dns.calls.Load() < 2 {
		t.Errorf("the name was resolved %d times; the test needs the dial to resolve again", dns.calls.Load())
	}
}

func TestBodyIsCapped(t *testing.T) {
	big := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, strings.Repeat("x", 10_000))
	}))
	c := New(Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, MaxBody: 1000})
	_, body, truncated, err := c.Get(context.Background(), big)
	if err != nil || len(body) != 1000 || !truncated {
		t.Errorf("capped fetch = %d bytes, truncated %v, %v; want 1000, true", len(body), truncated, err)
	}
}

func TestDialContextIsGuarded(t *testing.T) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	// accept reports whether a connection reached the listener.
	accept := func() bool {
		ln.SetDeadline(time.Now().Add(200 * time.Millisecond))
		conn, err := ln.Accept()
		if err != nil {
			return false
		}
		conn.Close()
		return true
	}
	ctx := context.Background()
	if conn, err := New(Options{}).DialContext(ctx, "tcp", ln.Addr().String()); !isBlocked(err) {
		if conn != nil {
			conn.Close()
		}
		t.Errorf("dial to loopback without an allowance = %v, want refused", err)
	}
	if accept() {
		t.Error("the refused dial reached the listener")
	}
	allowed := New(Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	conn, err := allowed.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("allowed dial: %v", err)
	}
	defer conn.Close()
	if !accept() {
		t.Error("the allowed dial did not reach the listener")
	}
}

// serverDNS fails every lookup as Go's resolver does, naming its server.
type serverDNS struct{}

func (serverDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, Server: "10.255.255.53:53", IsNotFound: true}
}

func TestResolveErrorsDoNotNameTheResolver(t *testing.T) {
	c := New(Options{Resolver: serverDNS{}})
	_, err := c.Check(context.Background(), "http://nowhere.example/")
	var de *net.DNSError
	if !errors.As(err, &de) || !de.IsNotFound || strings.Contains(err.Error(), "10.255.255.53") {
		t.Errorf("err = %v, want a not-found DNS error without the resolver's address", err)
	}
	_, err = c.DialContext(context.Background(), "tcp", "nowhere.example:443")
	if err == nil || strings.Contains(err.Error(), "10.255.255.53") {
		t.Errorf("dial err = %v, want one without the resolver's address", err)
	}
}

// A refusal says why in general terms and never which address a name
// resolved to (that would map our network for whoever gave the URL); the
// address is kept for the log.
func TestRefusalsDoNotTellTheAddress(t *testing.T) {
	dns := &fakeDNS{answers: map[string][]string{"vm": {"::ffff:127.0.0.1"}, "rebind.example": {"93.184.216.34", "10.9.8.7"}}}
	c := New(Options{Resolver: dns})
	ctx := context.Background()
	_, checkErr := c.Check(ctx, "http://vm/")
	_, _, _, dialErr := c.Get(ctx, "http://rebind.example/") // refused at the connection
	_, rawDialErr := c.DialContext(ctx, "tcp", "vm:443")
	for _, tc := range []struct {
		name    string
		err     error
		general string
		address string
	}{
		{"check", checkErr, "loopback", "127.0.0.1"},
		{"dial after rebinding", dialErr, "private", "10.9.8.7"},
		{"raw dial", rawDialErr, "loopback", "127.0.0.1"},
	} {
		var be *BlockedError
		if !errors.As(tc.err, &be) {
			t.Errorf("%s: err = %v, want refused", tc.name, tc.err)
			continue
		}
		if msg := be.Error(); !strings.Contains(msg, tc.general) || strings.Contains(msg, tc.address) || strings.Contains(msg, "::ffff") {
			t.Errorf("%s: message %q, want the kind of address (%s) and not the address", tc.name, msg, tc.general)
		}
		if !strings.Contains(be.Detail, tc.address) {
			t.Errorf("%s: detail %q, want the address for the log", tc.name, be.Detail)
		}
	}
	if be := new(BlockedError); errors.As(dialErr, &be) && be.Target != "http://rebind.example/" {
		t.Errorf("a refusal at the connection names %q, want the URL asked for", be.Target)
	}
}

func TestHTTPSRedirectsOnly(t *testing.T) {
	hop := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/plain" {
			fmt.Fprint(w, "downgraded")
			return
		}
		http.Redirect(w, r, "/plain", http.StatusFound)
	}))
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	if _, body, _, err := New(Options{Allow: allow}).Get(context.Background(), hop+"/start"); err != nil || string(body) != "downgraded" {
		t.Fatalf("without the option = %q, %v; want the redirect followed", body, err)
	}
	if _, _, _, err := New(Options{Allow: allow, HTTPSRedirectsOnly: true}).Get(context.Background(), hop+"/start"); !isBlocked(err) || !strings.Contains(err.Error(), "https") {
		t.Errorf("a redirect to http with HTTPSRedirectsOnly = %v, want refused", err)
	}
}

func TestNoRedirects(t *testing.T) {
	hop := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	c := New(Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, NoRedirects: true})
	req, _ := http.NewRequest(http.MethodPost, hop+"/hook", strings.NewReader("{}"))
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/elsewhere" {
		t.Errorf("with NoRedirects = %d to %q, want the 302 itself", res.StatusCode, res.Header.Get("Location"))
	}
}

func TestExempt(t *testing.T) {
	dns := &fakeDNS{answers: map[string][]string{"receiver.test": {"127.0.0.2"}, "public.example": {"93.184.216.34"}}}
	c := New(Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}, Resolver: dns})
	ctx := context.Background()
	for raw, want := range map[string]bool{
		"http://127.0.0.2:8080/hook":  true,
		"http://receiver.test/hook":   true,
		"http://public.example/hook":  false,
		"http://127.0.0.1/hook":       false,
		"http://nowhere.example/hook": false,
		"not a url with a host":       false,
	} {
		if got := c.Exempt(ctx, raw); got != want {
			t.Errorf("Exempt(%s) = %v, want %v", raw, got, want)
		}
	}
	if New(Options{Resolver: dns}).Exempt(ctx, "http://127.0.0.2/") {
		t.Error("a client without an allow list exempts a target")
	}
}

// askedDNS records the names it is asked and answers them from a table.
type askedDNS struct {
	answers map[string]string
	mu      sync.Mutex
	asked   []string
}

func (d *askedDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	d.asked = append(d.asked, host)
	d.mu.Unlock()
	if a, ok := d.answers[strings.TrimSuffix(host, ".")]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// A client that hides names looks up only names under a public suffix,
// fully qualified, so that the resolver's search domains never turn
// "redis" into redis.default.svc.cluster.local, and "redis" itself, or
// printer.local, is not looked up at all.
func TestNamesAreLookedUpFullyQualified(t *testing.T) {
	for _, tc := range []struct {
		hiding bool
		want   []string
	}{
		{true, []string{"public.example.com.", "rooted.example.com.", "dial.example.com.", "exempt.example.com."}},
		// Others find localhost, or a receiver named by the search domains.
		{false, []string{"redis", "printer.local", "public.example.com", "rooted.example.com.", "dial.example.com", "exempt.example.com"}},
	} {
		dns := &askedDNS{answers: map[string]string{"public.example.com": "93.184.216.34"}}
		c := New(Options{Resolver: dns, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}})
		if tc.hiding {
			c = c.HidingNames()
		}
		ctx := context.Background()
		c.Check(ctx, "http://redis/")
		c.Check(ctx, "http://printer.local/")
		c.Check(ctx, "https://public.example.com:8443/")
		c.Check(ctx, "http://rooted.example.com./")
		c.Check(ctx, "http://10.0.0.1/") // an address is not looked up
		if conn, err := c.DialContext(ctx, "tcp", "dial.example.com:443"); err == nil {
			conn.Close()
		}
		c.Exempt(ctx, "http://exempt.example.com/")
		if !slices.Equal(dns.asked, tc.want) {
			t.Errorf("hiding names %v: the resolver was asked %q, want %q", tc.hiding, dns.asked, tc.want)
		}
	}
}

// A client that does not hide names finds localhost through the hosts
// file, as a receiver on the developer's machine is named.
func TestLocalhostIsFound(t *testing.T) {
	c := New(Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	if !c.Exempt(context.Background(), "http://localhost:8080/hook") {
		t.Error("http://localhost:8080/hook is not found exempt, with loopback allowed")
	}
}

// A client that hides names refuses a name that does not resolve and a
// name that resolves inside in the same words, at the check and at the
// connection; an IP address is still told what kind it is.
func TestHidingNames(t *testing.T) {
	dns := &askedDNS{answers: map[string]string{"inside.example.com": "10.1.2.3", "loop.example.com": "127.0.0.1", "public.example.com": "93.184.216.34"}}
	plain := New(Options{Resolver: dns})
	c := plain.HidingNames()
	ctx := context.Background()
	// refusal is the message and detail of a refusal, with the name in it
	// replaced by NAME.
	refusal := func(what, name string, err error) (string, string) {
		t.Helper()
		var be *BlockedError
		if !errors.As(err, &be) {
			t.Fatalf("%s: err = %v, want refused", what, err)
		}
		return strings.ReplaceAll(be.Error(), name, "NAME"), be.Detail
	}
	for _, tc := range []struct {
		name, detail string
	}{
		{"nowhere.example.com", "no such host"},
		{"inside.example.com", "10.1.2.3"},
		{"loop.example.com", "127.0.0.1"},
	} {
		_, err := c.Check(ctx, "http://"+tc.name+"/")
		msg, detail := refusal("check of "+tc.name, tc.name, err)
		if want := "refused to fetch http://NAME/: NAME does not resolve, or not to a public address"; msg != want {
			t.Errorf("check of %s: %q, want %q", tc.name, msg, want)
		}
		if !strings.Contains(detail, tc.detail) {
			t.Errorf("check of %s: detail %q, want %q for the log", tc.name, detail, tc.detail)
		}
		_, err = c.DialContext(ctx, "tcp", tc.name+":443")
		msg, _ = refusal("dial of "+tc.name, tc.name, err)
		if want := "refused to fetch NAME: NAME does not resolve, or not to a public address"; msg != want {
			t.Errorf("dial of %s: %q, want %q", tc.name, msg, want)
		}
	}
	if _, err := c.Check(ctx, "http://10.0.0.1/"); err == nil || !strings.Contains(err.Error(), "10.0.0.1 resolves to a private address") {
		t.Errorf("check of a private IP address = %v, want it told as private", err)
	}
	if _, err := c.Check(ctx, "https://public.example.com/"); err != nil {
		t.Errorf("check of a public name = %v", err)
	}
	if _, err := plain.Check(ctx, "http://inside.example.com/"); err == nil || !strings.Contains(err.Error(), "private address") {
		t.Errorf("the client HidingNames was called on = %v, want it unchanged", err)
	}
}

// A client that hides names refuses a name that is not under a public
// suffix as written, at the check and at the connection, without asking
// the resolver whether the service's network has it; the client it was
// made from still looks such names up.
func TestHidingNamesRefusesNamesOutsidePublicSuffixes(t *testing.T) {
	names := []string{"intranet", "printer.local", "foo.svc.cluster.local", "intranet.corp"}
	answers := map[string]string{}
	for _, n := range names {
		answers[n] = "93.184.216.34" // were they looked up, they would pass
	}
	dns := &askedDNS{answers: answers}
	plain := New(Options{Resolver: dns})
	c := plain.HidingNames()
	ctx := context.Background()
	for _, name := range names {
		_, err := c.Check(ctx, "http://"+name+":8080/x")
		if want := "refused to fetch http://" + name + ":8080/x: " + name + " is not an IP address or a name under a public suffix"; errString(err) != want || !isBlocked(err) {
			t.Errorf("check of %s = %v, want %q", name, err, want)
		}
		_, err = c.DialContext(ctx, "tcp", name+":443")
		if want := "refused to fetch " + name + ": " + name + " is not an IP address or a name under a public suffix"; errString(err) != want || !isBlocked(err) {
			t.Errorf("dial of %s = %v, want %q", name, err, want)
		}
	}
	if len(dns.asked) != 0 {
		t.Errorf("the resolver was asked %q, want nothing", dns.asked)
	}
	for _, name := range names {
		if _, err := plain.Check(ctx, "http://"+name+"/"); err != nil {
			t.Errorf("a client that does not hide names refused %s: %v", name, err)
		}
	}
}

// A client that hides names follows a redirect to a name under a public
// suffix and refuses one to another name, naming the redirect's URL, before
// anything is looked up; the client it was made from follows both.
func TestHidingNamesRedirectsToPublicNamesOnly(t *testing.T) {
	srv := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if host := r.URL.Query().Get("to"); host != "" {
			_, port, _ := net.SplitHostPort(r.Host)
			http.Redirect(w, r, "http://"+net.JoinHostPort(host, port)+"/landed", http.StatusFound)
			return
		}
		fmt.Fprint(w, "landed on "+r.Host)
	}))
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv, "http://"))
	newDNS := func() *askedDNS {
		return &askedDNS{answers: map[string]string{"intranet": "127.0.0.1", "printer.local": "127.0.0.1", "intranet.example.com": "127.0.0.1"}}
	}
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	ctx := context.Background()

	dns := newDNS()
	c := New(Options{Resolver: dns, Allow: allow}).HidingNames()
	for _, name := range []string{"intranet", "printer.local"} {
		_, _, _, err := c.Get(ctx, srv+"/?to="+name)
		want := "refused to fetch http://" + name + ":" + port + "/landed: " + name + " is not an IP address or a name under a public suffix"
		if !isBlocked(err) || err.Error() != want {
			t.Errorf("a redirect to %s = %v, want %q", name, err, want)
		}
	}
	if len(dns.asked) != 0 {
		t.Errorf("the resolver was asked %q, want nothing", dns.asked)
	}
	_, body, _, err := c.Get(ctx, srv+"/?to=intranet.example.com")
	if want := "landed on intranet.example.com:" + port; err != nil || string(body) != want {
		t.Errorf("a redirect to a public name = %q, %v; want %q", body, err, want)
	}

	plain := New(Options{Resolver: newDNS(), Allow: allow})
	for _, name := range []string{"intranet", "printer.local"} {
		if _, body, _, err := plain.Get(ctx, srv+"/?to="+name); err != nil || string(body) != "landed on "+name+":"+port {
			t.Errorf("a client that does not hide names, redirected to %s = %q, %v; want it followed", name, body, err)
		}
	}
}

// A refusal of a long name outside the public suffixes is cut, name and
// URL, as every refusal is, so that its reason survives.
func TestARefusalOfALongNameKeepsItsReason(t *testing.T) {
	t.Parallel()
	c := New(Options{Resolver: &askedDNS{}}).HidingNames()
	long := strings.Repeat("a", 2000) + ".local"
	_, err := c.Check(context.Background(), "http://"+long+"/")
	if msg := errString(err); !isBlocked(err) || len(msg) > 500 || !strings.HasSuffix(msg, "… is not an IP address or a name under a public suffix") {
		t.Errorf("the refusal of a long name says %d bytes: %.80q…; want it cut, with the reason whole", len(msg), msg)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// A response's header is read up to 64 KiB: a larger one is an error that
// says so, not megabytes read into memory.
func TestResponseHeaderIsCapped(t *testing.T) {
	srv := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		size, _ := strconv.Atoi(r.URL.Query().Get("kib"))
		w.Header().Set("X-Padding", strings.Repeat("x", size<<10))
	}))
	c := New(Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if res, _, _, err := c.Get(context.Background(), srv+"/?kib=60"); err != nil || len(res.Header.Get("X-Padding")) != 60<<10 {
		t.Errorf("a 60 KiB header = %v; want it read", err)
	}
	if _, _, _, err := c.Get(context.Background(), srv+"/?kib=65"); err == nil || !strings.Contains(err.Error(), "headers exceeded 65536 bytes") {
		t.Errorf("a 65 KiB header = %v; want an error saying it exceeded 65536 bytes", err)
	}
}

// A refusal of a long URL shows its start and keeps the reason whole.
func TestARefusalOfALongURLKeepsItsReason(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	long := "http://10.0.0.1/" + strings.Repeat("a", 2000)
	_, err := c.Check(context.Background(), long)
	var b *BlockedError
	if !errors.As(err, &b) || b.Target != long {
		t.Fatalf("Check(a long private URL) = %v, want it refused naming the whole URL", err)
	}
	if msg := err.Error(); len(msg) > 300 || !strings.HasPrefix(msg, "refused to fetch http://10.0.0.1/aaa") || !strings.HasSuffix(msg, ": "+b.Reason) {
		t.Errorf("the refusal says %d bytes: %.80q…; want the URL's start and the reason, in under 300", len(msg), msg)
	}
}
