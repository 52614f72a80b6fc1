package whois

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
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

func fixture(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureDomain is the domain a fixture file is about: "com_google.com.txt" → google.com.
func fixtureDomain(file string) string {
	_, rest, _ := strings.Cut(strings.TrimSuffix(file, ".txt"), "_")
	return rest
}

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestEveryFoundFixtureParses(t *testing.T) {
	files, _ := filepath.Glob("testdata/noterror/*.txt")
	if len(files) < 30 {
		t.Fatalf("%d found fixtures", len(files))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			domain := fixtureDomain(name)
			rec, err := Parse(domain, fixture(t, "noterror/"+name))
			if err != nil {
				t.Fatal(err)
			}
			if rec.Domain != domain || rec.Source != domaininfo.SourceFallback {
				t.Errorf("domain %q source %q, want %q", rec.Domain, rec.Source, domain)
			}
			if rec.Registrar == "" && rec.Created.IsZero() && len(rec.Nameservers) == 0 {
				t.Errorf("nothing parsed: %+v", rec)
			}
		})
	}
}

func TestEveryNotFoundFixtureIsNotFound(t *testing.T) {
	files, _ := filepath.Glob("testdata/notfound/*.txt")
	if len(files) != 12 {
		t.Fatalf("%d not-found fixtures", len(files))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			if _, err := Parse(fixtureDomain(name), fixture(t, "notfound/"+name)); !errors.Is(err, domaininfo.ErrNotFound) {
				t.Errorf("error = %v, want ErrNotFound", err)
			}
		})
	}
}

func TestParseFixtures(t *testing.T) {
	googleNS := []string{"ns1.google.com", "ns2.google.com", "ns3.google.com", "ns4.google.com"}
	prohibited := []string{"client update prohibited", "client transfer prohibited", "client delete prohibited",
		"server update prohibited", "server transfer prohibited", "server delete prohibited"}
	tests := []struct {
		file string
		want domaininfo.Record
	}{
		{"com_google.com.txt", domaininfo.Record{Domain: "google.com", Statuses: prohibited, Registrar: "MarkMonitor, Inc.",
			Registrant: "Google LLC", Created: date("1997-09-15T07:00:00Z"), Expires: date("2028-09-13T07:00:00Z"),
			Updated: date("2019-09-09T15:39:04Z"), Nameservers: []string{"ns2.google.com", "ns3.google.com", "ns4.google.com", "ns1.google.com"}}},
		{"uk_google.uk.txt", domaininfo.Record{Domain: "google.uk", Registrar: "Markmonitor Inc. t/a MarkMonitor Inc.",
			Created: date("2014-06-11T00:00:00Z"), Expires: date("2020-06-11T00:00:00Z"), Updated: date("2019-05-10T00:00:00Z"),
			Nameservers: []string{"ns1.googledomains.com", "ns2.googledomains.com", "ns3.googledomains.com", "ns4.googledomains.com"}}},
		{"de_google.de.txt", domaininfo.Record{Domain: "google.de", Statuses: []string{"connect"},
			Updated: date("2018-03-12T20:44:25Z"), Nameservers: googleNS}},
		{"io_google.io.txt", domaininfo.Record{Domain: "google.io", Statuses: prohibited, Registrar: "MarkMonitor, Inc.",
			Registrant: "Google LLC", Created: date("2002-10-01T01:00:00Z"), Expires: date("2020-09-29T07:00:00Z"),
			Updated: date("2019-08-29T09:41:07Z")}},
		{"com_git.com.txt", domaininfo.Record{Domain: "git.com", Statuses: []string{"client transfer prohibited"},
			Registrar: "UNIREGISTRAR CORP", Registrant: "PRIVACYDOTLINK CUSTOMER 1078347",
			Created: date("2001-06-14T10:32:43Z"), Expires: date("2020-06-14T10:32:43Z"), Updated: date("2019-05-17T23:02:50Z")}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got, err := Parse(fixtureDomain(tc.file), fixture(t, "noterror/"+tc.file))
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Source = domaininfo.SourceFallback
			if tc.want.Nameservers == nil {
				tc.want.Nameservers = got.Nameservers // checked for every fixture below
			}
			tc.want.Emails = got.Emails
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseEmailsAndRedactions(t *testing.T) {
	rec, err := Parse("example.com", []byte(`Domain Name: EXAMPLE.COM
Registrar: Example Registrar
Registrant Name: REDACTED FOR PRIVACY
Registrant Organization: Example Org
Registrant Email: Please query the RDDS service of the Registrar of Record identified in this output
Registrar Abuse Contact Email: Abuse@Example-Registrar.test
Tech Email: abuse@example-registrar.test
Name Server: NS1.EXAMPLE.COM. 192.0.2.1
Name Server: ns1.example.com
Domain Status: ok https://icann.org/epp#ok
`))
	if err != nil {
		t.Fatal(err)
	}
	want := domaininfo.Record{Domain: "example.com", Registrar: "Example Registrar", Registrant: "Example Org",
		Statuses: []string{"ok"}, Nameservers: []string{"ns1.example.com"}, Emails: []string{"abuse@example-registrar.test"},
		Source: domaininfo.SourceFallback}
	if !reflect.DeepEqual(rec, want) {
		t.Errorf("\n got %+v\nwant %+v", rec, want)
	}
	if _, err := Parse("x.com", []byte("% just a comment\n\nnothing here\n")); err == nil || errors.Is(err, domaininfo.ErrNotFound) {
		t.Errorf("an empty answer: %v, want a parse error", err)
	}
}

// fakeNet plays IANA, registries and registrars on one local listener:
// the dialer sends every host there and the first line names the question;
// the answer is chosen by the host dialled.
type fakeNet struct {
	ln      net.Listener
	mu      sync.Mutex
	answers map[string]func(question string) []byte // host → answer
	asked   map[string][]string
	open    atomic.Int32
	peak    atomic.Int32
	hold    chan struct{} // when set, connections to whois.slow.test wait on it
}

func newFakeNet(t *testing.T) *fakeNet {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeNet{ln: ln, answers: map[string]func(string) []byte{}, asked: map[string][]string{}}
	t.Cleanup(func() { ln.Close() })
	go f.serve()
	return f
}

func (f *fakeNet) serve() {
	for {
		conn, err := f.ln.Accept()
		if err != nil {
			return
		}
		go f.answer(conn)
	}
}

func (f *fakeNet) answer(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	host, _ := r.ReadString('\n') // the dialer's preamble: which host was dialled
	host = strings.TrimSpace(host)
	q, _ := r.ReadString('\n')
	q = strings.TrimSpace(q)
	f.mu.Lock()
	f.asked[host] = append(f.asked[host], q)
	answer := f.answers[host]
	f.mu.Unlock()
	if host == "whois.slow.test" {
		n := f.open.Add(1)
		for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
		}
		<-f.hold
		f.open.Add(-1)
	}
	if answer != nil {
		conn.Write(answer(q))
	}
}

func (f *fakeNet) on(host string, answer func(q string) []byte) {
	f.mu.Lock()
	f.answers[host] = answer
	f.mu.Unlock()
}

func (f *fakeNet) questions(host string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked[host]...)
}

// dial connects to the fake and tells it which host was meant.
func (f *fakeNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port != "43" {
		return nil, fmt.Errorf("dial %s: want port 43", addr)
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, network, f.ln.Addr().String())
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(conn, "%s\n", host)
	return conn, nil
}

func iana(servers map[string]string) func(string) []byte {
	return func(tld string) []byte {
		if s, ok := servers[tld]; ok {
			return []byte("% IANA WHOIS server\n\ndomain:       " + strings.ToUpper(tld) + "\n\nrefer:        " + s + "\n")
		}
		return []byte("% IANA WHOIS server\n\n% This query returned 0 objects.\n")
	}
}

func TestLookupThickRegistry(t *testing.T) {
	f := newFakeNet(t)
	f.on("whois.iana.org", iana(map[string]string{"de": "whois.denic.de"}))
	f.on("whois.denic.de", func(q string) []byte { return fixture(t, "noterror/de_google.de.txt") })
	c := New("whois.iana.org:43", WithDialer(f.dial))
	rec, err := c.Lookup(context.Background(), "google.de")
	if err != nil || rec.Domain != "google.de" || len(rec.Nameservers) != 4 {
		t.Fatalf("= %+v, %v", rec, err)
	}
	if _, err := c.Lookup(context.Background(), "other.de"); err != nil {
		t.Fatal(err)
	}
	if q := f.questions("whois.iana.org"); len(q) != 1 || q[0] != "de" {
		t.Errorf("IANA asked %v, want [de] once", q)
	}
	if q := f.questions("whois.denic.de"); !reflect.DeepEqual(q, []string{"google.de", "other.de"}) {
		t.Errorf("registry asked %v", q)
	}
}

// thinRegistry is a Verisign-style answer naming the registrar's server.
const thinRegistry = `Domain Name: EXAMPLE-THIN.COM
Registry Domain ID: 1_DOMAIN_COM-VRSN
Registrar WHOIS Server: whois.registrar.test
Updated Date: 2024-01-02T03:04:05Z
Creation Date: 2001-02-03T04:05:06Z
Registry Expiry Date: 2030-02-03T04:05:06Z
Registrar: Test Registrar, Inc.
Domain Status: clientTransferProhibited https://icann.org/epp#clientTransferProhibited
Name Server: NS1.EXAMPLE-THIN.COM
Name Server: NS2.EXAMPLE-THIN.COM
`

func TestLookupFollowsOneReferral(t *testing.T) {
	f := newFakeNet(t)
	f.on("whois.iana.org", iana(map[string]string{"com": "whois.verisign-grs.com"}))
	f.on("whois.verisign-grs.com", func(q string) []byte { return []byte(thinRegistry) })
	f.on("whois.registrar.test", func(q string) []byte {
		// The registrar's own answer names itself again: no second hop.
		return []byte(strings.Replace(string(fixture(t, "noterror/com_google.com.txt")), "whois.markmonitor.com", "whois.registrar.test", 1))
	})
	rec, err := New("whois.iana.org:43", WithDialer(f.dial)).Lookup(context.Background(), "example-thin.com")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Registrant != "Google LLC" || rec.Registrar != "Test Registrar, Inc." || !rec.Expires.Equal(date("2030-02-03T04:05:06Z")) ||
		!reflect.DeepEqual(rec.Nameservers, []string{"ns1.example-thin.com", "ns2.example-thin.com"}) {
		t.Errorf("record = %+v", rec)
	}
	if q := f.questions("whois.registrar.test"); len(q) != 1 {
		t.Errorf("registrar asked %d times, want 1", len(q))
	}
}

func TestLookupKeepsTheRegistryAnswerWhenTheReferralFails(t *testing.T) {
	f := newFakeNet(t)
	f.on("whois.iana.org", iana(map[string]string{"com": "whois.verisign-grs.com"}))
	f.on("whois.verisign-grs.com", func(q string) []byte { return []byte(thinRegistry) })
	// whois.registrar.test answers nothing at all.
	rec, err := New("whois.iana.org:43", WithDialer(f.dial)).Lookup(context.Background(), "example-thin.com")
	if err != nil || rec.Registrar != "Test Registrar, Inc." || rec.Registrant != "" {
		t.Errorf("= %+v, %v", rec, err)
	}
}

func TestLookupErrors(t *testing.T) {
	f := newFakeNet(t)
	f.on("whois.iana.org", iana(map[string]string{"com": "whois.verisign-grs.com", "big": "whois.nic.big"}))
	f.on("whois.verisign-grs.com", func(q string) []byte {
		return fixture(t, "notfound/com_likexian-have-no-money-to-register.com.txt")
	})
	f.on("whois.nic.big", func(q string) []byte {
		return []byte("Domain Name: " + q + "\nRegistrar: Big\n" + strings.Repeat("Remark: x\n", 100_000) + "Registrant Name: lost past the cap\n")
	})
	c := New("whois.iana.org:43", WithDialer(f.dial), WithMaxSize(64<<10))
	if _, err := c.Lookup(context.Background(), "free.com"); !errors.Is(err, domaininfo.ErrNotFound) {
		t.Errorf("not found: %v", err)
	}
	if _, err := c.Lookup(context.Background(), "x.nosuchtld"); err == nil || !strings.Contains(err.Error(), "IANA names no WHOIS server") {
		t.Errorf("unknown TLD: %v", err)
	}
	rec, err := c.Lookup(context.Background(), "a.big")
	if err != nil || rec.Registrar != "Big" || rec.Registrant != "" {
		t.Errorf("capped answer: %+v, %v", rec, err)
	}
	if _, err := New("127.0.0.1:1", WithTimeout(time.Second)).Lookup(context.Background(), "a.com"); err == nil {
		t.Error("an unreachable IANA answered")
	}
}

func TestLookupHonoursContextAndBoundsQueriesPerServer(t *testing.T) {
	f := newFakeNet(t)
	f.hold = make(chan struct{})
	f.on("whois.iana.org", iana(map[string]string{"slowtld": "whois.slow.test"}))
	f.on("whois.slow.test", func(q string) []byte { return []byte("Domain Name: " + q + "\nRegistrar: Slow\n") })
	const perServer, lookups = 2, 5
	c := New("whois.iana.org:43", WithDialer(f.dial), WithPerServer(perServer))
	if _, err := c.tldServer(context.Background(), "slowtld"); err != nil {
		t.Fatal(err)
	}

	// A lookup whose context ends while the server holds it returns.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.Lookup(ctx, "cancelled.slowtld"); errc <- err }()
	for f.open.Load() != 1 {
		time.Sleep(time.Millisecond) // wait for the connection to be held
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled lookup: %v", err)
	}
	f.hold <- struct{}{} // let the fake finish the abandoned connection

	var wg sync.WaitGroup
	for i := range lookups {
		wg.Go(func() {
			if _, err := c.Lookup(context.Background(), fmt.Sprintf("d%d.slowtld", i)); err != nil {
				t.Error(err)
			}
		})
	}
	for range lookups {
		f.hold <- struct{}{} // release one held connection at a time
	}
	wg.Wait()
	if p := f.peak.Load(); p > perServer {
		t.Errorf("%d queries at once on one server, bound %d", p, perServer)
	}
}

func FuzzParse(f *testing.F) {
	for _, dir := range []string{"noterror", "notfound"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.txt"))
		for _, file := range files {
			f.Add(fixtureDomain(filepath.Base(file)), fixture(f, dir+"/"+filepath.Base(file)))
		}
	}
	f.Fuzz(func(t *testing.T, domain string, text []byte) {
		rec, err := Parse(domain, text)
		if err != nil {
			return
		}
		if rec.Domain != domain && (rec.Domain != strings.ToLower(rec.Domain) || strings.ContainsAny(rec.Domain, " \t")) {
			t.Errorf("domain %q", rec.Domain)
		}
		for _, ns := range rec.Nameservers {
			if ns == "" || ns != strings.ToLower(ns) || strings.HasSuffix(ns, ".") {
				t.Errorf("nameserver %q", ns)
			}
		}
	})
}
