package rdap

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/domaininfo"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestParseFixtures(t *testing.T) {
	tests := []struct {
		file string
		want domaininfo.Record
	}{
		{"verisign-com-google.com.json", domaininfo.Record{
			Domain: "google.com",
			Statuses: []string{"client delete prohibited", "client transfer prohibited", "client update prohibited",
				"server delete prohibited", "server transfer prohibited", "server update prohibited"},
			Registrar: "MarkMonitor Inc.",
			Created:   date("1997-09-15T04:00:00Z"), Expires: date("2028-09-14T04:00:00Z"),
			Nameservers: []string{"ns1.google.com", "ns2.google.com", "ns3.google.com", "ns4.google.com"},
			Emails:      []string{"abusecomplaints@markmonitor.com"},
			Source:      domaininfo.SourceRDAP,
		}},
		{"verisign-com-themarquetry.com.json", domaininfo.Record{
			Domain: "themarquetry.com", Statuses: []string{"client transfer prohibited"},
			Registrar: "Hosting Concepts B.V. d/b/a Registrar.eu",
			Created:   date("2021-03-16T17:07:37Z"), Expires: date("2022-03-16T17:07:37Z"),
			Nameservers: []string{"ns1.dns-parking.com", "ns2.dns-parking.com"},
			Emails:      []string{"abuse@registrar.eu"},
			Source:      domaininfo.SourceRDAP,
		}},
		{"norid-no-domain.json", domaininfo.Record{
			Domain: "norway.no", Registrar: "Domeneshop AS",
			Created: date("2017-01-24T12:09:23Z"), Updated: date("2021-01-14T05:16:59Z"),
			Nameservers: []string{"ns1-09.azure-dns.com", "ns2-09.azure-dns.net", "ns3-09.azure-dns.org", "ns4-09.azure-dns.info"},
			Source:      domaininfo.SourceRDAP,
		}},
		{"cznic-cz-example.cz.json", domaininfo.Record{
			Domain: "example.cz", Statuses: []string{"active"},
			Registrar: "REG-INTERNET-CZ", Registrant: "SB:EXAMPLE",
			Created: date("2004-08-30T22:55:00Z"), Expires: date("2019-08-30T12:00:00Z"),
			Nameservers: []string{"ns2.pipni.cz", "ns3.pipni.cz", "ns.pipni.cz"},
			Source:      domaininfo.SourceRDAP,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got, err := Parse(fixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			// Emails of the norid fixture: every vCard address, deduplicated.
			if tc.file == "norid-no-domain.json" {
				if len(got.Emails) == 0 || !strings.Contains(strings.Join(got.Emails, ","), "hostmaster@domeneshop.no") {
					t.Errorf("emails = %v, want hostmaster@domeneshop.no among them", got.Emails)
				}
				got.Emails = nil
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%s)\n got %+v\nwant %+v", tc.file, got, tc.want)
			}
		})
	}
}

func TestParseRejectsWhatIsNotADomain(t *testing.T) {
	for _, in := range []string{``, `[]`, `{}`, `{"objectClassName":"entity","ldhName":"x.com"}`, `{"ldhName":5}`, `{"ldhName":"a.com","status":"active"}`} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%s) = nil error", in)
		}
	}
	// Odd vCards and events are skipped, not fatal.
	rec, err := Parse([]byte(`{"ldhName":"A.COM.","events":[{"eventAction":"registration","eventDate":"yesterday"}],
		"entities":[{"roles":["REGISTRAR"],"vcardArray":["vcard",[["fn",{},"text"],["fn",{},"text",["","Acme"]],["email",{},"text","not an email"]]]},
		{"roles":["registrant"],"vcardArray":"nope"}]}`))
	if err != nil || rec.Domain != "a.com" || rec.Registrar != "Acme" || !rec.Created.IsZero() || rec.Emails != nil {
		t.Errorf("= %+v, %v", rec, err)
	}
}

func TestBootstrap(t *testing.T) {
	b := DefaultBootstrap()
	if got := b.Servers("com"); len(got) != 1 || got[0].String() != "https://rdap.verisign.com/com/v1/" {
		t.Errorf("Servers(com) = %v", got)
	}
	if got := b.Servers("COM."); len(got) != 1 {
		t.Errorf("Servers(COM.) = %v", got)
	}
	for _, tld := range []string{"io", "de", "nosuchtld"} {
		if got := b.Servers(tld); got != nil {
			t.Errorf("Servers(%s) = %v, want none", tld, got)
		}
	}
	if got := b.Publication(); !got.Equal(date("2025-06-27T17:00:02Z")) {
		t.Errorf("Publication = %v", got)
	}
	for _, bad := range []string{`not json`, `{"version":"2.0","services":[]}`, `{"version":"1.0","services":[]}`, `{"version":"1.0","services":[[["com"]]]}`} {
		if _, err := ParseBootstrap([]byte(bad)); err == nil {
			t.Errorf("ParseBootstrap(%s) = nil error", bad)
		}
	}
	// Both service URLs listed; https first; a path without a trailing slash gets one.
	b2, err := ParseBootstrap([]byte(`{"version":"1.0","publication":"2026-01-01T00:00:00Z","services":[[["example"],["http://rdap.example/v1","https://rdap.example/v1"]]]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := b2.Servers("example"); len(got) != 2 || got[0].String() != "https://rdap.example/v1/" {
		t.Errorf("Servers = %v", got)
	}
}

func TestLoadBootstrap(t *testing.T) {
	path := filepath.Join("testdata", "iana-dns-bootstrap.json")
	fromFile, err := LoadBootstrap(context.Background(), http.DefaultClient, path)
	if err != nil || len(fromFile.Servers("com")) == 0 {
		t.Fatalf("from file: %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/dns.json" {
			http.NotFound(w, r)
			return
		}
		w.Write(fixture(t, "iana-dns-bootstrap.json"))
	}))
	defer srv.Close()
	fromURL, err := LoadBootstrap(context.Background(), srv.Client(), srv.URL+"/dns.json")
	if err != nil || string(fromURL.Raw()) != string(fromFile.Raw()) {
		t.Fatalf("from URL: %v", err)
	}
	if _, err := LoadBootstrap(context.Background(), srv.Client(), srv.URL+"/missing.json"); err == nil {
		t.Error("a 404 bootstrap URL loaded")
	}
	if _, err := LoadBootstrap(context.Background(), srv.Client(), "testdata/nope.json"); err == nil {
		t.Error("a missing file loaded")
	}
}

// world is a TLS server that answers for every RDAP host: a client whose
// transport dials it for any address and trusts its certificate.
type world struct {
	srv      *httptest.Server
	mu       sync.Mutex
	handlers map[string]http.HandlerFunc // host+path → handler
	hits     map[string]int
}

func newWorld(t *testing.T) *world {
	w := &world{handlers: map[string]http.HandlerFunc{}, hits: map[string]int{}}
	w.srv = httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		key := r.Host + r.URL.Path
		w.mu.Lock()
		h, ok := w.handlers[key]
		w.hits[key]++
		w.mu.Unlock()
		if !ok {
			http.NotFound(rw, r)
			return
		}
		h(rw, r)
	}))
	t.Cleanup(w.srv.Close)
	return w
}

func (w *world) handle(hostPath string, h http.HandlerFunc) {
	w.mu.Lock()
	w.handlers[hostPath] = h
	w.mu.Unlock()
}

func (w *world) serve(hostPath string, body []byte) {
	w.handle(hostPath, func(rw http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "application/rdap+json") {
			http.Error(rw, "bad accept", 400)
			return
		}
		rw.Header().Set("Content-Type", "application/rdap+json")
		rw.Write(body)
	})
}

func (w *world) client(perHost int) *Client {
	addr := w.srv.Listener.Addr().String()
	tr := w.srv.Client().Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	tr.TLSClientConfig = &tls.Config{RootCAs: tr.TLSClientConfig.RootCAs, ServerName: "example.com"}
	return New(&http.Client{Transport: tr, Timeout: 5 * time.Second}, DefaultBootstrap(), perHost, nil)
}

func TestLookupFollowsTheRegistrarLink(t *testing.T) {
	w := newWorld(t)
	w.serve("rdap.verisign.com/com/v1/domain/google.com", fixture(t, "verisign-com-google.com.json"))
	w.serve("rdap.markmonitor.com/rdap/domain/GOOGLE.COM", []byte(`{"objectClassName":"domain","ldhName":"google.com",
		"entities":[{"roles":["Registrant"],"vcardArray":["vcard",[["version",{},"text","4.0"],["fn",{},"text",""],["org",{},"text","Google LLC"],["email",{},"text","DNS-Admin@google.com"]]]}]}`))
	rec, err := w.client(0).Lookup(context.Background(), "google.com")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Registrant != "Google LLC" || rec.Registrar != "MarkMonitor Inc." || len(rec.Statuses) != 6 ||
		!reflect.DeepEqual(rec.Emails, []string{"abusecomplaints@markmonitor.com", "dns-admin@google.com"}) {
		t.Errorf("record = %+v", rec)
	}
}

func TestLookupKeepsTheRegistryAnswerWhenTheRegistrarFails(t *testing.T) {
	w := newWorld(t)
	w.serve("rdap.verisign.com/com/v1/domain/themarquetry.com", fixture(t, "verisign-com-themarquetry.com.json"))
	w.handle("rdap.registrar.eu/v1/domain/THEMARQUETRY.COM", func(rw http.ResponseWriter, r *http.Request) {
		http.Error(rw, "down", http.StatusBadGateway)
	})
	rec, err := w.client(0).Lookup(context.Background(), "themarquetry.com")
	if err != nil || rec.Registrar != "Hosting Concepts B.V. d/b/a Registrar.eu" || rec.Registrant != "" {
		t.Fatalf("= %+v, %v", rec, err)
	}
	if w.hits["rdap.registrar.eu/v1/domain/THEMARQUETRY.COM"] != 1 {
		t.Errorf("registrar asked %d times, want 1", w.hits["rdap.registrar.eu/v1/domain/THEMARQUETRY.COM"])
	}
}

func TestLookupErrors(t *testing.T) {
	w := newWorld(t)
	w.handle("rdap.verisign.com/com/v1/domain/busy.com", func(rw http.ResponseWriter, r *http.Request) {
		http.Error(rw, "slow down", http.StatusTooManyRequests)
	})
	w.handle("rdap.verisign.com/com/v1/domain/broken.com", func(rw http.ResponseWriter, r *http.Request) {
		http.Error(rw, "oops", http.StatusInternalServerError)
	})
	w.handle("rdap.verisign.com/com/v1/domain/garbage.com", func(rw http.ResponseWriter, r *http.Request) {
		rw.Write([]byte(`<html>`))
	})
	w.handle("rdap.verisign.com/com/v1/domain/huge.com", func(rw http.ResponseWriter, r *http.Request) {
		rw.Write([]byte(`{"ldhName":"huge.com","x":"` + strings.Repeat("a", maxAnswerSize) + `"}`))
	})
	c := w.client(0)
	tests := []struct {
		domain string
		check  func(error) bool
	}{
		{"unregistered.com", func(err error) bool { return errors.Is(err, domaininfo.ErrNotFound) }},
		{"busy.com", func(err error) bool {
			return strings.Contains(err.Error(), "429") && !errors.Is(err, domaininfo.ErrNotFound)
		}},
		{"broken.com", func(err error) bool { return strings.Contains(err.Error(), "500") }},
		{"garbage.com", func(err error) bool { return strings.Contains(err.Error(), "decode") }},
		{"huge.com", func(err error) bool { return strings.Contains(err.Error(), "larger than") }},
		{"example.io", func(err error) bool { return errors.Is(err, ErrNoServer) }},
	}
	for _, tc := range tests {
		t.Run(tc.domain, func(t *testing.T) {
			_, err := c.Lookup(context.Background(), tc.domain)
			if err == nil || !tc.check(err) {
				t.Errorf("Lookup(%s) error = %v", tc.domain, err)
			}
		})
	}
}

func TestLookupHonoursContext(t *testing.T) {
	w := newWorld(t)
	w.handle("rdap.verisign.com/com/v1/domain/hang.com", func(rw http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := w.client(0).Lookup(ctx, "hang.com"); errc <- err }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}

func TestLookupBoundsRequestsPerServer(t *testing.T) {
	w := newWorld(t)
	const perHost, lookups = 2, 6
	var inflight, peak atomic.Int32
	arrived := make(chan struct{}, lookups)
	release := make(chan struct{})
	w.handle("rdap.verisign.com/com/v1/domain/wait.com", func(rw http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		arrived <- struct{}{}
		<-release
		inflight.Add(-1)
		http.NotFound(rw, r)
	})
	c := w.client(perHost)
	var wg sync.WaitGroup
	for range lookups {
		wg.Go(func() { c.Lookup(context.Background(), "wait.com") })
	}
	// Let requests in one at a time: each arrival proves a slot was free.
	for range lookups {
		<-arrived
		if n := inflight.Load(); n > perHost {
			t.Errorf("%d requests in flight, bound %d", n, perHost)
		}
		release <- struct{}{}
	}
	wg.Wait()
	if peak.Load() > perHost {
		t.Errorf("peak %d in flight, bound %d", peak.Load(), perHost)
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"verisign-com-google.com.json", "verisign-com-themarquetry.com.json", "norid-no-domain.json", "cznic-cz-example.cz.json"} {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`{"ldhName":"x.com","entities":[{"vcardArray":["vcard",[["fn",{},"text",[[["deep"]]]]]]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := Parse(data)
		if err != nil {
			return
		}
		if rec.Domain == "" || rec.Domain != strings.ToLower(rec.Domain) || strings.HasSuffix(rec.Domain, ".") {
			t.Errorf("domain %q", rec.Domain)
		}
		for _, m := range rec.Emails {
			if !strings.Contains(m, "@") || m != strings.ToLower(m) {
				t.Errorf("email %q", m)
			}
		}
	})
}
