package siteprobe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/domaind/domaind/internal/fetch"
)

// testDNS answers every name with addr, except the names in fail, which
// do not exist; it counts the look-ups.
type testDNS struct {
	addr string
	fail map[string]bool

	mu      sync.Mutex
	lookups int
}

func (d *testDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	d.lookups++
	d.mu.Unlock()
	if d.fail[strings.TrimSuffix(host, ".")] {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(d.addr)}, nil
}

// newClient returns a fetch client that may reach 127.0.0.1 (the test
// servers) and resolves every name there, trusting certs for https.
func newClient(tb testing.TB, certs ...*x509.Certificate) *fetch.Client {
	tb.Helper()
	c := fetch.New(fetch.Options{
		Allow:    []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Resolver: &testDNS{addr: "127.0.0.1"},
	})
	if len(certs) > 0 {
		pool := x509.NewCertPool()
		for _, cert := range certs {
			pool.AddCert(cert)
		}
		c.HTTP().Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	return c
}

// site is a test server answering by path from a table, counting requests
// by path; unknown paths are 404.
type site struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newSite(tb testing.TB, useTLS bool, pages map[string]http.HandlerFunc) *site {
	tb.Helper()
	s := &site{hits: map[string]int{}}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.Host+r.URL.Path]++
		s.mu.Unlock()
		if h, ok := pages[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	if useTLS {
		s.StartTLS()
	} else {
		s.Start()
	}
	tb.Cleanup(s.Close)
	return s
}

func (s *site) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.hits {
		n += c
	}
	return n
}

func (s *site) hitsOf(hostPath string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[hostPath]
}

// port returns the server's port, for URLs that name the host.
func (s *site) port() string {
	_, p, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(s.URL, "http://"), "https://"), ":")
	return p
}

func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
}

func recorded(tb testing.TB, name string) http.HandlerFunc {
	return answer(http.StatusOK, string(readTestdata(tb, name)))
}

func redirectTo(target string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, target, http.StatusFound) }
}

// closedPort returns an address on 127.0.0.1 where nothing listens.
func closedPort(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestProbeTakesHTTPSFirst(t *testing.T) {
	secure := newSite(t, true, map[string]http.HandlerFunc{"/": recorded(t, "active-sourceforge-accessrunner.html")})
	plain := newSite(t, false, map[string]http.HandlerFunc{"/": recorded(t, "parked-parkingcrew.html")})
	c := newClient(t, secure.Certificate())

	got := probe(context.Background(), c, "127.0.0.1", []string{secure.URL + "/", plain.URL + "/"})
	if got.Reason != ReasonActive || !got.Reason.Active() || got.URL != secure.URL+"/" || got.Status != 200 {
		t.Errorf("probe = %+v; want the https page, active", got)
	}
	if n := plain.requests(); n != 0 {
		t.Errorf("http was asked %d times though https answered", n)
	}
}

func TestProbeFallsBackToHTTP(t *testing.T) {
	plain := newSite(t, false, map[string]http.HandlerFunc{"/": recorded(t, "parked-parkingcrew.html")})
	failing := newSite(t, true, map[string]http.HandlerFunc{"/": answer(http.StatusServiceUnavailable, "down")})
	tests := []struct {
		name  string
		https string
		trust []*x509.Certificate
	}{
		{"nothing listens", "https://" + closedPort(t) + "/", nil},
		{"not TLS", "https://" + strings.TrimPrefix(plain.URL, "http://") + "/", nil},
		{"untrusted certificate", failing.URL + "/", nil},
		{"an error status", failing.URL + "/", []*x509.Certificate{failing.Certificate()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, tt.trust...)
			got := probe(context.Background(), c, "127.0.0.1", []string{tt.https, plain.URL + "/"})
			if got.Reason != ReasonParked || got.URL != plain.URL+"/" || got.Status != 200 || got.Err != "" {
				t.Errorf("probe = %+v; want the http page, parked", got)
			}
		})
	}
}

func TestProbeNotOK(t *testing.T) {
	gone := newSite(t, true, nil)
	broken := newSite(t, false, map[string]http.HandlerFunc{"/": answer(http.StatusInternalServerError, "oops")})
	c := newClient(t, gone.Certificate())
	tests := []struct {
		name       string
		homes      []string
		wantURL    string
		wantStatus int
	}{
		{"both answer with errors: the first", []string{gone.URL + "/", broken.URL + "/"}, gone.URL + "/", 404},
		{"an error beats no answer", []string{"https://" + closedPort(t) + "/", broken.URL + "/"}, broken.URL + "/", 500},
		{"an error beats no answer after it", []string{gone.URL + "/", "http://" + closedPort(t) + "/"}, gone.URL + "/", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := probe(context.Background(), c, "127.0.0.1", tt.homes)
			if got.Reason != ReasonNotOK || got.Reason.Active() || got.URL != tt.wantURL || got.Status != tt.wantStatus {
				t.Errorf("probe = %+v; want not_ok %d from %s", got, tt.wantStatus, tt.wantURL)
			}
		})
	}
}

func TestProbeUnreachable(t *testing.T) {
	t.Run("refused on both", func(t *testing.T) {
		https, http := "https://"+closedPort(t)+"/", "http://"+closedPort(t)+"/"
		got := probe(context.Background(), newClient(t), "127.0.0.1", []string{https, http})
		if got.Reason != ReasonUnreachable || got.Reason.Active() || got.Status != 0 || got.URL != http {
			t.Errorf("probe = %+v; want unreachable at %s", got, http)
		}
		if !strings.Contains(got.Err, https+": ") || !strings.Contains(got.Err, http+": ") {
			t.Errorf("Err = %q; want both failures", got.Err)
		}
	})
	t.Run("no such domain", func(t *testing.T) {
		dns := &testDNS{addr: "127.0.0.1", fail: map[string]bool{"gone.example.com": true}}
		c := fetch.New(fetch.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Resolver: dns})
		got := Probe(context.Background(), c, "Gone.Example.com")
		if got.Reason != ReasonUnreachable || got.Domain != "gone.example.com" || !strings.Contains(got.Err, "no such host") {
			t.Errorf("Probe = %+v; want unreachable, no such host", got)
		}
		if !strings.Contains(got.Err, "https://gone.example.com/") || !strings.Contains(got.Err, "http://gone.example.com/") {
			t.Errorf("Err = %q; want both schemes tried", got.Err)
		}
	})
	t.Run("the context ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		dns := &testDNS{addr: "127.0.0.1"}
		c := fetch.New(fetch.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Resolver: dns})
		got := Probe(ctx, c, "example.com")
		if got.Reason != ReasonUnreachable || !strings.Contains(got.Err, "context canceled") {
			t.Errorf("Probe = %+v; want unreachable", got)
		}
		if dns.lookups > 1 {
			t.Errorf("%d look-ups after the context ended; want http not tried", dns.lookups)
		}
	})
}

func TestProbeBlocked(t *testing.T) {
	inside := newSite(t, false, map[string]http.HandlerFunc{"/": recorded(t, "active-sourceforge-autoglade.html")})
	t.Run("a name on a private address", func(t *testing.T) {
		dns := &testDNS{addr: "10.0.0.7"}
		got := Probe(context.Background(), fetch.New(fetch.Options{Resolver: dns}), "intranet.example.com")
		if got.Reason != ReasonBlocked || got.Reason.Active() || !strings.Contains(got.Err, "private address") {
			t.Errorf("Probe = %+v; want blocked, a private address", got)
		}
		if dns.lookups != 1 {
			t.Errorf("%d look-ups; want https refused and http not tried", dns.lookups)
		}
	})
	t.Run("the loopback, without the tests' exemption", func(t *testing.T) {
		dns := &testDNS{addr: "127.0.0.1"}
		got := probe(context.Background(), fetch.New(fetch.Options{Resolver: dns}), "127.0.0.1", []string{inside.URL + "/"})
		if got.Reason != ReasonBlocked || inside.requests() != 0 {
			t.Errorf("probe = %+v after %d requests; want blocked before any", got, inside.requests())
		}
	})
	t.Run("a redirect inside", func(t *testing.T) {
		outside := newSite(t, false, map[string]http.HandlerFunc{"/": redirectTo("http://169.254.169.254/latest/meta-data/")})
		got := probe(context.Background(), newClient(t), "127.0.0.1", []string{outside.URL + "/"})
		if got.Reason != ReasonBlocked || !strings.Contains(got.Err, "link-local") {
			t.Errorf("probe = %+v; want blocked, link-local", got)
		}
	})
	t.Run("not a host name", func(t *testing.T) {
		got := Probe(context.Background(), newClient(t), "evil.example.com/path?x=1")
		if got.Reason != ReasonBlocked || got.Err == "" {
			t.Errorf("Probe = %+v; want blocked with the reason", got)
		}
	})
}

func TestProbeFollowsClientRedirects(t *testing.T) {
	s := newSite(t, false, map[string]http.HandlerFunc{
		"/":       recorded(t, "redirect-rdweb.html"), // meta refresh and script to /rdweb
		"/rdweb":  recorded(t, "active-app-arkose.html"),
		"/one":    answer(200, `<meta http-equiv="refresh" content="0;url=/two">`),
		"/two":    answer(200, `<meta http-equiv="refresh" content="0;url=/three">`),
		"/three":  answer(200, `<meta http-equiv="refresh" content="0;url=/four">`),
		"/four":   recorded(t, "active-sourceforge-autoglade.html"),
		"/parked": answer(200, `<script>window.onload=function(){window.location.href="/lander"}</script>`),
		"/cpanel": recorded(t, "registrar-cpanel-redirect.html"),
		"/away":   answer(200, `<meta http-equiv="refresh" content="0;url=http://`+closedPort(t)+`/">`),
		"/inside": answer(200, `<meta http-equiv="refresh" content="0;url=http://10.0.0.1/admin">`),
	})
	c := newClient(t)
	host := strings.TrimPrefix(s.URL, "http://")
	tests := []struct {
		home       string
		wantReason Reason
		wantURL    string
	}{
		{"/", ReasonActive, "/rdweb"},
		{"/one", ReasonClientRedirect, "/three"}, // two hops followed, the third not
		{"/parked", ReasonParked, "/parked"},     // where it goes settles it: /lander is not fetched
		{"/cpanel", ReasonRegistrarDefault, "/cpanel"},
		{"/away", ReasonClientRedirect, "/away"}, // the target gives no answer
	}
	for _, tt := range tests {
		t.Run(tt.home, func(t *testing.T) {
			got := probe(context.Background(), c, "127.0.0.1", []string{s.URL + tt.home})
			if got.Reason != tt.wantReason || got.URL != s.URL+tt.wantURL {
				t.Errorf("probe = %+v; want %s at %s", got, tt.wantReason, tt.wantURL)
			}
			if gotErr, wantErr := got.Err != "", tt.home == "/away"; gotErr != wantErr {
				t.Errorf("Err = %q; want one only where the redirect's target gave no answer", got.Err)
			}
		})
	}
	if got := probe(context.Background(), c, "127.0.0.1", []string{s.URL + "/inside"}); got.Reason != ReasonBlocked || got.URL != "http://10.0.0.1/admin" {
		t.Errorf("probe = %+v; want blocked at the redirect's target", got)
	}
	for _, path := range []string{"/four", "/lander", "/cgi-sys/defaultwebpage.cgi"} {
		if n := s.hitsOf(host + path); n != 0 {
			t.Errorf("%s fetched %d times; want never", path, n)
		}
	}
}

func TestProbeOffSiteRedirects(t *testing.T) {
	var s *site
	s = newSite(t, false, map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			host, _, _ := strings.Cut(r.Host, ":")
			switch host {
			case "brand-alias.com":
				redirectTo("http://www.brand.com:"+s.port()+"/")(w, r)
			case "old-name.com":
				redirectTo("http://www.old-name.com:"+s.port()+"/")(w, r)
			case "for-sale.com":
				redirectTo("http://www.sedoparking.com:"+s.port()+"/")(w, r)
			case "gone.com":
				redirectTo("http://elsewhere.com:"+s.port()+"/empty")(w, r)
			default:
				recorded(t, "active-sourceforge-accessrunner.html")(w, r)
			}
		},
		"/empty": recorded(t, "empty-xhtml.html"),
	})
	c := newClient(t)
	tests := []struct {
		domain     string
		wantReason Reason
		wantActive bool
		wantHost   string
	}{
		{"brand-alias.com", ReasonRedirectOffSite, true, "www.brand.com"},
		{"old-name.com", ReasonActive, true, "www.old-name.com"},     // www is the same site
		{"for-sale.com", ReasonParked, false, "www.sedoparking.com"}, // a marketplace host, whatever its page says
		{"gone.com", ReasonEmpty, false, "elsewhere.com"},            // an empty page elsewhere is still empty
	}
	for _, tt := range tests {
		t.Run(tt.domain, func(t *testing.T) {
			home := "http://" + tt.domain + ":" + s.port() + "/"
			got := probe(context.Background(), c, tt.domain, []string{home})
			if got.Reason != tt.wantReason || got.Reason.Active() != tt.wantActive || !strings.HasPrefix(got.URL, "http://"+tt.wantHost+":") {
				t.Errorf("probe = %+v; want %s on %s", got, tt.wantReason, tt.wantHost)
			}
		})
	}
}
