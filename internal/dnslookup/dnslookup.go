// Package dnslookup is the dns-lookup free tool: the A, AAAA, CNAME, MX,
// NS, TXT and SOA records of a domain, asked of one recursive resolver in
// parallel and answered in a stable, sorted shape.
package dnslookup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// DefaultTimeout bounds each query (a UDP exchange, and the TCP one after
// it when the answer was truncated) of a Resolver without a Timeout.
const DefaultTimeout = 2 * time.Second

// fallbackAddr is the resolver asked when resolv.conf names none, as the C
// library does.
const fallbackAddr = "127.0.0.1:53"

// Resolver is the recursive resolver the lookups are sent to.
type Resolver struct {
	Addr    string        // host:port
	Timeout time.Duration // per query; zero means DefaultTimeout
}

// FromResolvConf returns the first nameserver of a resolv.conf(5) file
// (normally /etc/resolv.conf) as a Resolver, or 127.0.0.1:53 when the file
// does not exist or names no nameserver.
func FromResolvConf(path string) (*Resolver, error) {
	conf, err := dns.ClientConfigFromFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &Resolver{Addr: fallbackAddr}, nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", path, err)
	case len(conf.Servers) == 0:
		return &Resolver{Addr: fallbackAddr}, nil
	}
	return &Resolver{Addr: net.JoinHostPort(conf.Servers[0], conf.Port)}, nil
}

// Result is what Lookup found. NXDomain reports that the domain does not
// exist (its records are then all empty). Errors holds, under the key the
// type has in Records ("a", "mx"…), the queries the resolver answered with
// a failure (such as "SERVFAIL") or did not answer.
type Result struct {
	Domain   string            `json:"domain"`
	Resolver string            `json:"-"` // an address of the service's network: for logs, not answers
	NXDomain bool              `json:"nxdomain"`
	Records  Records           `json:"records"`
	Errors   map[string]string `json:"errors"`
}

// Records are a domain's records by type, each list sorted (addresses in
// numeric order, MX by preference then host, the rest by value); lists are
// empty rather than null, SOA is null when there is none. Names are
// written without their final dot.
type Records struct {
	A     []Record `json:"a"`
	AAAA  []Record `json:"aaaa"`
	CNAME []Record `json:"cname"`
	MX    []MX     `json:"mx"`
	NS    []Record `json:"ns"`
	TXT   []Record `json:"txt"` // a record's strings joined
	SOA   *SOA     `json:"soa"`
}

// Record is one A, AAAA, CNAME, NS or TXT record.
type Record struct {
	Value string `json:"value"`
	TTL   uint32 `json:"ttl"`
}

// MX is one mail exchanger.
type MX struct {
	Preference uint16 `json:"preference"`
	Host       string `json:"host"`
	TTL        uint32 `json:"ttl"`
}

// SOA is a zone's start of authority.
type SOA struct {
	MName   string `json:"mname"`
	RName   string `json:"rname"`
	Serial  uint32 `json:"serial"`
	Refresh uint32 `json:"refresh"`
	Retry   uint32 `json:"retry"`
	Expire  uint32 `json:"expire"`
	Minimum uint32 `json:"minimum"`
	TTL     uint32 `json:"ttl"`
}

// queryTypes are the record types looked up.
var queryTypes = []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeCNAME, dns.TypeMX, dns.TypeNS, dns.TypeTXT, dns.TypeSOA}

// answer is the outcome of one query.
type answer struct {
	msg *dns.Msg
	err error
}

// Lookup asks r for domain's records of every type at once, with recursion
// desired, retrying over TCP any answer truncated over UDP. domain must be
// a valid ASCII (A-label) name. A missing domain is a Result with NXDomain
// set; an error is returned only when the resolver answered none of the
// queries (unreachable, or ctx ended first).
func Lookup(ctx context.Context, r *Resolver, domain string) (*Result, error) {
	timeout := r.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	name := dns.Fqdn(domain)
	answers := make([]answer, len(queryTypes))
	var wg sync.WaitGroup
	for i, qtype := range queryTypes {
		wg.Go(func() {
			answers[i].msg, answers[i].err = query(ctx, r.Addr, timeout, name, qtype)
		})
	}
	wg.Wait()

	res := &Result{
		Domain:   domain,
		Resolver: r.Addr,
		Records: Records{
			A: []Record{}, AAAA: []Record{}, CNAME: []Record{}, MX: []MX{}, NS: []Record{}, TXT: []Record{},
		},
		Errors: map[string]string{},
	}
	var unanswered []error
	for i, a := range answers {
		qtype := strings.ToLower(dns.TypeToString[queryTypes[i]])
		switch {
		case a.err != nil:
			unanswered = append(unanswered, a.err)
			res.Errors[qtype] = describe(a.err)
			continue
		case a.msg.Rcode == dns.RcodeNameError && len(a.msg.Answer) == 0:
			res.NXDomain = true
			continue
		case a.msg.Rcode != dns.RcodeSuccess && a.msg.Rcode != dns.RcodeNameError:
			res.Errors[qtype] = dns.RcodeToString[a.msg.Rcode]
			continue
		}
		for _, rr := range a.msg.Answer {
			if rr.Header().Rrtype == queryTypes[i] {
				res.Records.add(rr)
			}
		}
	}
	if len(unanswered) == len(queryTypes) {
		return nil, fmt.Errorf("dns lookup %s at %s: %w", domain, r.Addr, unanswered[0])
	}
	res.Records.sort()
	return res, nil
}

// query sends one question over UDP, then over TCP if the answer was
// truncated.
func query(ctx context.Context, addr string, timeout time.Duration, name string, qtype uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = true
	m.SetEdns0(1232, false) // the DNS Flag Day 2020 size: no fragmentation
	in, err := exchange(ctx, "udp", addr, timeout, m)
	if err == nil && in.Truncated {
		in, err = exchange(ctx, "tcp", addr, timeout, m)
	}
	return in, err
}

// exchange is one round trip that ends when ctx does, not only at its
// deadline.
func exchange(ctx context.Context, network, addr string, timeout time.Duration, m *dns.Msg) (*dns.Msg, error) {
	c := &dns.Client{Net: network, Timeout: timeout}
	conn, err := c.DialContext(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	in, _, err := c.ExchangeWithConnContext(ctx, m, conn)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return in, err
}

// describe says in a few words why a query got no answer, without the
// resolver's address (the caller has that).
func describe(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "no answer from the resolver"
}

func (rs *Records) add(rr dns.RR) {
	ttl := rr.Header().Ttl
	switch rr := rr.(type) {
	case *dns.A:
		rs.A = append(rs.A, Record{rr.A.String(), ttl})
	case *dns.AAAA:
		rs.AAAA = append(rs.AAAA, Record{rr.AAAA.String(), ttl})
	case *dns.CNAME:
		rs.CNAME = append(rs.CNAME, Record{hostname(rr.Target), ttl})
	case *dns.MX:
		rs.MX = append(rs.MX, MX{rr.Preference, hostname(rr.Mx), ttl})
	case *dns.NS:
		rs.NS = append(rs.NS, Record{hostname(rr.Ns), ttl})
	case *dns.TXT:
		rs.TXT = append(rs.TXT, Record{strings.Join(rr.Txt, ""), ttl})
	case *dns.SOA:
		rs.SOA = &SOA{hostname(rr.Ns), hostname(rr.Mbox), rr.Serial, rr.Refresh, rr.Retry, rr.Expire, rr.Minttl, ttl}
	}
}

func (rs *Records) sort() {
	byAddr := func(a, b Record) int {
		x, _ := netip.ParseAddr(a.Value)
		y, _ := netip.ParseAddr(b.Value)
		return x.Compare(y)
	}
	byValue := func(a, b Record) int { return cmp.Compare(a.Value, b.Value) }
	slices.SortFunc(rs.A, byAddr)
	slices.SortFunc(rs.AAAA, byAddr)
	slices.SortFunc(rs.CNAME, byValue)
	slices.SortFunc(rs.NS, byValue)
	slices.SortFunc(rs.TXT, byValue)
	slices.SortFunc(rs.MX, func(a, b MX) int {
		return cmp.Or(cmp.Compare(a.Preference, b.Preference), cmp.Compare(a.Host, b.Host))
	})
}

// hostname writes a name without its final dot, except the root (a null
// MX's ".").
func hostname(fqdn string) string {
	if fqdn == "." {
		return fqdn
	}
	return strings.TrimSuffix(fqdn, ".")
}
