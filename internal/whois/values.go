package whois

import (
	"net/mail"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/domaind/domaind/internal/domaininfo"
)

// hostname is a DNS name lower-cased without its trailing dot; anything
// that is not a plausible host name is "".
func hostname(s string) string {
	h := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(s), "."))
	if h == "" || strings.ContainsFunc(h, func(r rune) bool {
		return !(r == '.' || r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		return ""
	}
	return h
}

// serverHost is a name server's host name: a hostname with at least two
// labels that is not an IP address.
func serverHost(s string) string {
	h := hostname(s)
	if !strings.Contains(strings.Trim(h, "."), ".") {
		return ""
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return ""
	}
	return h
}

// isAddress reports a glue address as servers are listed with it:
// "192.0.2.1", "[192.0.2.1]", "(192.0.2.1/32)", "2001:db8::1,".
func isAddress(tok string) bool {
	tok = strings.Trim(tok, "[](),;")
	tok, _, _ = strings.Cut(tok, "/")
	_, err := netip.ParseAddr(tok)
	return err == nil
}

// nameServers reads the host names on one line of a server list. keyed
// says the line is a key's value ("Name Server: ns1.example.net 192.0.2.1")
// rather than a bare line under a heading; a bare line is only a server
// when nothing but glue addresses follows the name, so prose under a
// heading ("Please visit www.example.net") is never taken for one.
func nameServers(v string, keyed bool) []string {
	toks := strings.FieldsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || r == ',' })
	// DNS.PT lists the zone's records: "sapo.pt  NS  ns2.sapo.pt." and the
	// glue "ns2.sapo.pt.  A  212.55.154.194" (corpus/pt/sapo.pt.txt).
	if keyed && len(toks) == 3 {
		switch strings.ToUpper(toks[1]) {
		case "NS":
			if h := serverHost(toks[2]); h != "" {
				return []string{h}
			}
		case "A", "AAAA":
			if h := serverHost(toks[0]); h != "" && isAddress(toks[2]) {
				return []string{h}
			}
		}
	}
	var hosts []string
	for i, tok := range toks {
		if h := serverHost(tok); h != "" {
			hosts = append(hosts, h)
			continue
		}
		if isAddress(tok) && i > 0 {
			continue
		}
		if keyed {
			break // "ns1.example.net - 192.0.2.1", "ns2.example.net | IPv4: …"
		}
		return nil
	}
	return hosts
}

// status reads one status value as RDAP spells it (RFC 8056): an EPP code
// "clientTransferProhibited" (with or without its explanation or
// https://icann.org/epp link) becomes "client transfer prohibited",
// registry words become lower case ("ACTIVE" → "active",
// "server_delete_prohibited" → "server delete prohibited"). A sentence
// ("Registered until expiry date.") is not a status: "".
func status(v string) string {
	v = strings.TrimSpace(v)
	for _, sep := range []string{" http", " (", " - ", "\t"} {
		v, _, _ = strings.Cut(v, sep)
	}
	v = strings.ReplaceAll(strings.TrimRight(strings.TrimSpace(v), " -"), "_", " ")
	words := strings.Fields(v)
	if len(words) == 0 || len(words) > 4 || strings.HasSuffix(v, ".") ||
		strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsLetter(r) && r != ' ' }) {
		return ""
	}
	if len(words) > 1 {
		return strings.ToLower(strings.Join(words, " "))
	}
	var b strings.Builder
	prev := ' '
	for _, r := range v {
		if unicode.IsUpper(r) && unicode.IsLower(prev) {
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToLower(r))
		prev = r
	}
	return b.String()
}

// registrarNoise is what registries append to a registrar's name: its web
// address in parentheses ("MarkMonitor Inc. (http://www.markmonitor.com)",
// "NETPLANET GmbH ( https://nic.at/registrar/597 )") or Nominet's tag.
var registrarNoise = regexp.MustCompile(`\s*(\(\s*(https?://|www\.)[^)]*\)|\[Tag = [^\]]*\])\s*$`)

// registrarName is a registrar as the answer names it, without the noise.
func registrarName(v string) string {
	v, _, _ = strings.Cut(v, "\t")
	return strings.TrimSpace(registrarNoise.ReplaceAllString(v, ""))
}

// redacted reports values that stand in for data the registry withholds.
func redacted(v string) bool {
	l := strings.ToLower(v)
	return strings.Contains(l, "redacted") || strings.Contains(l, "not disclosed") ||
		strings.Contains(l, "withheld") || strings.HasPrefix(l, "please query the rdds") ||
		strings.HasPrefix(l, "data protected") || strings.HasPrefix(l, "not shown") || strings.HasPrefix(l, "hidden")
}

func addEmail(r *domaininfo.Record, v string) {
	addr, err := mail.ParseAddress(strings.TrimSpace(v))
	if err != nil {
		return
	}
	m := strings.ToLower(addr.Address)
	if !slices.Contains(r.Emails, m) {
		r.Emails = append(r.Emails, m)
	}
}

// serverAddr is a WHOIS server named in an answer as host:43, or "".
func serverAddr(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.Index(v, "://"); i >= 0 {
		v = v[i+3:]
	}
	v, _, _ = strings.Cut(v, "/")
	if h := hostname(v); h != "" && strings.Contains(h, ".") {
		return h + ":43"
	}
	return ""
}
