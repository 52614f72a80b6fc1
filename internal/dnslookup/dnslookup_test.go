package dnslookup

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
)

// bigTXT is one TXT record of 12 strings of 250 bytes: too large for a UDP
// answer (even at 1232 bytes of EDNS0), so it must come over TCP.
var bigTXT = strings.Repeat(`"`+strings.Repeat("a", 250)+`" `, 12)

// zone is what the test resolver knows, as a recursive resolver would
// answer it (its records in no particular order).
var zone = `
example.test.          300   IN A     192.0.2.10
example.test.          300   IN A     192.0.2.2
example.test.          300   IN AAAA  2001:db8::1
example.test.          3600  IN MX    20 mx2.example.test.
example.test.          3600  IN MX    10 mx1.example.test.
example.test.          86400 IN NS    ns2.example.test.
example.test.          86400 IN NS    ns1.example.test.
example.test.          600   IN TXT   "v=spf1 include:_spf.example.test " "-all"
example.test.          600   IN TXT   "google-site-verification=abc123"
example.test.          3600  IN SOA   ns1.example.test. hostmaster.example.test. 2024010101 7200 3600 1209600 300
www.example.test.      120   IN CNAME example.test.
big.example.test.      60    IN TXT   ` + bigTXT + `
big.example.test.      60    IN A     192.0.2.99
partial.example.test.  60    IN A     192.0.2.7
`

// zoneHandler answers from zone, following CNAMEs; unknown names are
// NXDOMAIN, partial.example.test's MX is SERVFAIL, and answers that do not
// fit the asker's UDP size are truncated.
type zoneHandler struct {
	rrs map[string][]dns.RR // by owner name

	mu   sync.Mutex
	seen []string // "name type network" of every query
}

func newZoneHandler(tb testing.TB) *zoneHandler {
	tb.Helper()
	h := &zoneHandler{rrs: map[string][]dns.RR{}}
	zp := dns.NewZoneParser(strings.NewReader(zone), "", "")
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		h.rrs[rr.Header().Name] = append(h.rrs[rr.Header().Name], rr)
	}
	if err := zp.Err(); err != nil {
		tb.Fatal(err)
	}
	return h
}

func (h *zoneHandler) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	q := req.Question[0]
	network := w.RemoteAddr().Network()
	h.mu.Lock()
	h.seen = append(h.seen, q.Name+" "+dns.TypeToString[q.Qtype]+" "+network)
	h.mu.Unlock()

	m := new(dns.Msg)
	m.SetReply(req)
	m.RecursionAvailable = true
	switch {
	case !req.RecursionDesired:
		m.Rcode = dns.RcodeRefused
	case q.Name == "partial.example.test." && q.Qtype == dns.TypeMX:
		m.Rcode = dns.RcodeServerFailure
	case h.rrs[q.Name] == nil:
		m.Rcode = dns.RcodeNameError
		m.Ns = h.rrs["example.test."][9:10] // the SOA, for negative caching
	default:
		for name := q.Name; name != ""; {
			next := ""
			for _, rr := range h.rrs[name] {
				switch t := rr.Header().Rrtype; {
				case t == q.Qtype:
					m.Answer = append(m.Answer, rr)
				case t == dns.TypeCNAME:
					m.Answer = append(m.Answer, rr)
					next = rr.(*dns.CNAME).Target
				}
			}
			name = next
		}
	}
	if network == "udp" {
		size := dns.MinMsgSize
		if opt := req.IsEdns0(); opt != nil {
			size = int(opt.UDPSize())
			m.SetEdns0(opt.UDPSize(), false)
		}
		m.Truncate(size)
	}
	w.WriteMsg(m)
}

func (h *zoneHandler) queries() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

// serveDNS starts h on 127.0.0.1 over UDP and TCP (one port) and returns
// its address.
func serveDNS(tb testing.TB, h dns.Handler) string {
	tb.Helper()
	var (
		pc  net.PacketConn
		ln  net.Listener
		err error
	)
	for range 10 { // the UDP port may be taken for TCP
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			tb.Fatal(err)
		}
		if ln, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
	}
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	servers := []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: ln, Handler: h}}
	for _, srv := range servers {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		wg.Go(func() {
			if err := srv.ActivateAndServe(); err != nil {
				tb.Errorf("dns server: %v", err)
			}
		})
		<-started
	}
	tb.Cleanup(func() {
		for _, srv := range servers {
			srv.Shutdown()
		}
		wg.Wait()
	})
	return pc.LocalAddr().String()
}

func emptyRecords() Records {
	return Records{A: []Record{}, AAAA: []Record{}, CNAME: []Record{}, MX: []MX{}, NS: []Record{}, TXT: []Record{}}
}

func TestLookup(t *testing.T) {
	h := newZoneHandler(t)
	addr := serveDNS(t, h)
	r := &Resolver{Addr: addr, Timeout: time.Second}

	exampleSOA := &SOA{
		MName: "ns1.example.test", RName: "hostmaster.example.test", Serial: 2024010101,
		Refresh: 7200, Retry: 3600, Expire: 1209600, Minimum: 300, TTL: 3600,
	}
	// example are example.test's records; www.example.test is a CNAME to it.
	example := func(cname []Record) Records {
		return Records{
			A:     []Record{{"192.0.2.2", 300}, {"192.0.2.10", 300}},
			AAAA:  []Record{{"2001:db8::1", 300}},
			CNAME: cname,
			MX:    []MX{{10, "mx1.example.test", 3600}, {20, "mx2.example.test", 3600}},
			NS:    []Record{{"ns1.example.test", 86400}, {"ns2.example.test", 86400}},
			TXT: []Record{
				{"google-site-verification=abc123", 600},
				{"v=spf1 include:_spf.example.test -all", 600},
			},
			SOA: exampleSOA,
		}
	}
	tests := []struct {
		name   string
		domain string
		want   *Result
	}{
		{
			name:   "every type",
			domain: "example.test",
			want: &Result{
				Domain: "example.test", Resolver: addr,
				Records: example([]Record{}),
				Errors:  map[string]string{},
			},
		},
		{
			name:   "alias",
			domain: "www.example.test",
			want: &Result{
				Domain: "www.example.test", Resolver: addr,
				Records: example([]Record{{"example.test", 120}}),
				Errors:  map[string]string{},
			},
		},
		{
			name:   "truncated answer retried over TCP",
			domain: "big.example.test",
			want: &Result{
				Domain: "big.example.test", Resolver: addr,
				Records: func() Records {
					rs := emptyRecords()
					rs.A = []Record{{"192.0.2.99", 60}}
					rs.TXT = []Record{{strings.Repeat("a", 3000), 60}}
					return rs
				}(),
				Errors: map[string]string{},
			},
		},
		{
			name:   "a type the resolver fails",
			domain: "partial.example.test",
			want: &Result{
				Domain: "partial.example.test", Resolver: addr,
				Records: func() Records {
					rs := emptyRecords()
					rs.A = []Record{{"192.0.2.7", 60}}
					return rs
				}(),
				Errors: map[string]string{"mx": "SERVFAIL"},
			},
		},
		{
			name:   "no such domain",
			domain: "nope.example.test",
			want: &Result{
				Domain: "nope.example.test", Resolver: addr, NXDomain: true,
				Records: emptyRecords(), Errors: map[string]string{},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Lookup(context.Background(), r, tt.domain)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Lookup(%s) (-want +got):\n%s", tt.domain, diff)
			}
		})
	}

	res, _ := Lookup(context.Background(), r, "example.test")
	if b, _ := json.Marshal(res); strings.Contains(string(b), addr) {
		t.Errorf("the JSON answer names the resolver: %s", b)
	}

	var overTCP []string
	for _, q := range h.queries() {
		if strings.HasSuffix(q, " tcp") {
			overTCP = append(overTCP, q)
		}
	}
	if diff := cmp.Diff([]string{"big.example.test. TXT tcp"}, overTCP); diff != "" {
		t.Errorf("queries over TCP (-want +got):\n%s", diff)
	}
}

func TestLookupUnansweredIsAnError(t *testing.T) {
	// A socket nobody reads: no query is ever answered.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	r := &Resolver{Addr: pc.LocalAddr().String(), Timeout: 5 * time.Second}
	tests := []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		wantErr error // nil: any error
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 200*time.Millisecond)
		}, nil},
		{"canceled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			start := time.Now()
			res, err := Lookup(ctx, r, "example.test")
			if err == nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Lookup = %+v, %v; want an error (%v)", res, err, tt.wantErr)
			}
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Errorf("Lookup took %v; the context ended after 200ms", elapsed)
			}
		})
	}
}

func TestFromResolvConf(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name string
		path string
		want string
	}{
		{"first nameserver", write("two", "search example.test\nnameserver 192.0.2.53\nnameserver 192.0.2.54\n"), "192.0.2.53:53"},
		{"IPv6 nameserver", write("v6", "nameserver 2001:db8::53\n"), "[2001:db8::53]:53"},
		{"no nameserver", write("none", "search example.test\n"), "127.0.0.1:53"},
		{"no file", filepath.Join(dir, "missing"), "127.0.0.1:53"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := FromResolvConf(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if r.Addr != tt.want {
				t.Errorf("Addr = %q, want %q", r.Addr, tt.want)
			}
		})
	}
}
