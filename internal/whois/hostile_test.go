package whois

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/internal/testtool"
)

// hostNames resolves the hostile test's server names.
type hostNames map[string]string

func (h hostNames) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := h[strings.TrimSuffix(host, ".")]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// A registry's answer is not ours: a referral to an address, or to a name
// that resolves into our own network, is never connected to. The service's
// network is 127.0.0.1 here (the victim); the registries' world is
// 127.0.0.2, the one network the guard lets tests reach.
func TestHostileReferralsAreNotFollowed(t *testing.T) {
	var victimConns atomic.Int32
	victim := listen(t, "127.0.0.1", func(string) string {
		victimConns.Add(1)
		return "secret"
	})
	registry := listen(t, "127.0.0.2", func(q string) string {
		switch q {
		case "meta":
			return "refer: 169.254.169.254\n"
		case "evil":
			return "refer: whois.evil.test\n"
		case "test":
			return "refer: whois.registry.test\n"
		case "literal.test":
			return thinAnswer("LITERAL.TEST", "127.0.0.1")
		case "named.test":
			return thinAnswer("NAMED.TEST", "whois.evil.test")
		}
		return "No match for \"" + strings.ToUpper(q) + "\".\n"
	})
	guard := fetch.New(fetch.Options{
		Allow:    []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")},
		Resolver: hostNames{"whois.registry.test": "127.0.0.2", "whois.evil.test": "127.0.0.1"},
	})
	var mu sync.Mutex
	var dialled []string
	// Port 43 is every server's port in the wild; here each world has one listener.
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, addr)
		mu.Unlock()
		host, _, _ := net.SplitHostPort(addr)
		port := registry.Port()
		if host == "whois.evil.test" || host == "127.0.0.1" || host == "169.254.169.254" {
			port = victim.Port()
		}
		return guard.DialContext(ctx, network, net.JoinHostPort(host, strconv.Itoa(int(port))))
	}
	c := New(registry.String(), WithDialer(dial))
	ctx := context.Background()

	if _, err := c.Lookup(ctx, "x.meta"); err == nil {
		t.Error("IANA's referral to an address was followed")
	}
	if _, err := c.Lookup(ctx, "x.evil"); err == nil {
		t.Error("IANA's referral to a name in our network was followed")
	}
	for _, domain := range []string{"literal.test", "named.test"} {
		rec, err := c.Lookup(ctx, domain)
		if err != nil || rec.Registrar != "Example Registrar, Inc." {
			t.Errorf("%s = %+v, %v; want the registry's answer kept", domain, rec, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, literal := range []string{"169.254.169.254:43", "127.0.0.1:43"} {
		if slices.Contains(dialled, literal) {
			t.Errorf("dialled %s: an address in an answer must not even be dialled (dialled %v)", literal, dialled)
		}
	}
	if n := victimConns.Load(); n != 0 {
		t.Errorf("the service's own network got %d queries", n)
	}
}

// thinAnswer is a thin registry's answer naming a registrar WHOIS server.
func thinAnswer(domain, referral string) string {
	return "   Domain Name: " + domain + "\n   Registrar WHOIS Server: " + referral +
		"\n   Registrar: Example Registrar, Inc.\n   Creation Date: 2001-02-03T04:05:06Z\n" +
		"   Registry Expiry Date: 2031-02-03T04:05:06Z\n   Name Server: NS1.EXAMPLE.NET\n   Domain Status: ok https://icann.org/epp#ok\n"
}

// listen serves WHOIS on ip: one question a connection, answered by answer.
func listen(tb testing.TB, ip string, answer func(question string) string) netip.AddrPort {
	tb.Helper()
	addr := testtool.ServeTCP(tb, ip+":0", func(conn net.Conn) {
		q, _ := bufio.NewReader(conn).ReadString('\n')
		conn.Write([]byte(answer(strings.TrimSpace(q))))
	})
	return netip.MustParseAddrPort(addr)
}

func TestThrottleRefusesBeforeDialling(t *testing.T) {
	busy := errors.New("budget spent")
	var asked []string
	dialled := false
	c := New("whois.iana.org:43",
		WithThrottle(func(_ context.Context, server string) error { asked = append(asked, server); return busy }),
		WithDialer(func(context.Context, string, string) (net.Conn, error) {
			dialled = true
			return nil, errors.New("no network")
		}))
	if _, err := c.Lookup(context.Background(), "example.io"); !errors.Is(err, busy) {
		t.Errorf("Lookup = %v, want the throttle's refusal", err)
	}
	if dialled || !slices.Equal(asked, []string{"whois.iana.org:43"}) {
		t.Errorf("dialled %v, throttle asked about %v; want no dial and the server asked about", dialled, asked)
	}
}
