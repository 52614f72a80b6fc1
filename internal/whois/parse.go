package whois

import (
	"bufio"
	"bytes"
	"fmt"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/domaind/domaind/internal/domaininfo"
)

// answer is a parsed port-43 answer: the record and the registrar WHOIS
// server a thin registry names.
type answer struct {
	rec      domaininfo.Record
	referral string
}

// Parse reads a WHOIS answer about domain into a Record. A "no match"
// answer is an error wrapping domaininfo.ErrNotFound; an answer with
// nothing recognisable in it is another error.
func Parse(domain string, text []byte) (domaininfo.Record, error) {
	a, err := parse(domain, text)
	return a.rec, err
}

// notFoundPrefixes start the line that says a registry has no such domain,
// in the wordings of the common registries (compared lower-case, trimmed).
var notFoundPrefixes = []string{
	"no match for", "not found", "no data found", "no entries found", "domain not found",
	"the queried object does not exist", "no object found", "domain status: no object found",
	"this domain name has not been registered", "status: free", "status: available",
	"no such domain", "object does not exist",
}

// field names the Record fields a key fills (keys compared lower-case with
// runs of spaces collapsed).
var fields = map[string]string{
	"domain name": "domain", "domain": "domain",
	"registrar": "registrar", "registrar name": "registrar", "sponsoring registrar": "registrar",
	"registrant name": "registrant", "registrant organization": "registrant_org", "registrant organisation": "registrant_org",
	"registrant":    "registrant",
	"creation date": "created", "created": "created", "created on": "created", "registered on": "created",
	"registration time": "created", "domain registration date": "created", "registered": "created",
	"registry expiry date": "expires", "registrar registration expiration date": "expires", "expiry date": "expires",
	"expiration date": "expires", "expires": "expires", "expires on": "expires", "paid-till": "expires",
	"expiration time": "expires", "domain expiration date": "expires", "renewal date": "expires",
	"updated date": "updated", "last updated": "updated", "changed": "updated", "last modified": "updated",
	"last update": "updated", "updated": "updated",
	"domain status": "status", "status": "status",
	"name server": "ns", "nameserver": "ns", "nserver": "ns", "name servers": "ns", "nameservers": "ns",
	"registrar whois server": "referral", "whois server": "referral",
}

// keyLine matches "Key: value" with a key of words (no URLs: a "://"
// after the colon is part of a value line, not a key).
var keyLine = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9 /().,'_-]{0,60}?)\s*:+\s*(.*)$`)

// tagSuffix is Nominet's " [Tag = X]" after a registrar name.
var tagSuffix = regexp.MustCompile(`\s*\[Tag = [^\]]*\]\s*$`)

func parse(domain string, text []byte) (answer, error) {
	var (
		a            answer
		registrantOr string
		block        string // field of a key-only line, for the indented lines below it
		found        bool   // any field recognised
	)
	a.rec.Source = domaininfo.SourceFallback
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	for sc.Scan() {
		raw := strings.ToValidUTF8(sc.Text(), "")
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "%") || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ">>>") {
			if line == "" {
				block = ""
			}
			continue
		}
		lower := strings.ToLower(line)
		for _, p := range notFoundPrefixes {
			if strings.HasPrefix(lower, p) {
				return a, fmt.Errorf("whois %s: %w", domain, domaininfo.ErrNotFound)
			}
		}
		indented := raw != "" && unicode.IsSpace(rune(raw[0]))
		key, value := "", ""
		if m := keyLine.FindStringSubmatch(line); m != nil && !strings.HasPrefix(m[2], "//") {
			key, value = normalizeKey(m[1]), strings.TrimSpace(m[2])
		} else if indented && block != "" {
			key, value = block, line // a value line of a block ("Name servers:" then one per line)
		} else {
			continue
		}
		field, known := fields[key]
		if value == "" {
			block = ""
			if known {
				block = key
			}
			continue
		}
		if strings.Contains(key, "email") || strings.Contains(key, "e-mail") {
			addEmail(&a.rec, value)
			found = true
			continue
		}
		if !known || redacted(value) {
			continue
		}
		found = true
		switch field {
		case "domain":
			if a.rec.Domain == "" {
				a.rec.Domain = hostname(value)
			}
		case "registrar":
			if a.rec.Registrar == "" {
				a.rec.Registrar = tagSuffix.ReplaceAllString(value, "")
			}
		case "registrant":
			if a.rec.Registrant == "" {
				a.rec.Registrant = value
			}
		case "registrant_org":
			if registrantOr == "" {
				registrantOr = value
			}
		case "created":
			setDate(&a.rec.Created, value)
		case "expires":
			setDate(&a.rec.Expires, value)
		case "updated":
			setDate(&a.rec.Updated, value)
		case "status":
			if s := eppStatus(value); s != "" && !slices.Contains(a.rec.Statuses, s) {
				a.rec.Statuses = append(a.rec.Statuses, s)
			}
		case "ns":
			if h := hostname(strings.Fields(value)[0]); h != "" && !slices.Contains(a.rec.Nameservers, h) {
				a.rec.Nameservers = append(a.rec.Nameservers, h)
			}
		case "referral":
			if a.referral == "" {
				a.referral = serverAddr(value)
			}
		}
	}
	if a.rec.Registrant == "" {
		a.rec.Registrant = registrantOr
	}
	if !found {
		return a, fmt.Errorf("whois %s: no registration data recognised in the answer", domain)
	}
	if a.rec.Domain == "" {
		a.rec.Domain = domain
	}
	return a, nil
}

func normalizeKey(k string) string {
	return strings.ToLower(strings.Join(strings.Fields(k), " "))
}

// redacted reports values that stand in for data the registry withholds.
func redacted(v string) bool {
	l := strings.ToLower(v)
	return strings.Contains(l, "redacted") || strings.Contains(l, "not disclosed") ||
		strings.Contains(l, "withheld") || strings.HasPrefix(l, "please query the rdds") ||
		strings.HasPrefix(l, "data protected")
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

// eppStatus reads "clientTransferProhibited https://icann.org/epp#..." as
// RDAP's spelling of the same status ("client transfer prohibited", RFC
// 8056), so both sources report statuses alike. Free text (Nominet's
// "Registered until expiry date.") is not a status.
func eppStatus(v string) string {
	word := strings.Fields(v)[0]
	for _, r := range word {
		if !unicode.IsLetter(r) {
			return ""
		}
	}
	if len(strings.Fields(v)) > 1 && !strings.Contains(v, "http") && !strings.Contains(v, "(") {
		return "" // a sentence, not a status code
	}
	var b strings.Builder
	for i, r := range word {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// dateLayouts are the date formats WHOIS servers use.
var dateLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05.999999999-0700", "2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02",
	"02-Jan-2006", "2-Jan-2006", "02-Jan-2006 15:04:05", "2006.01.02", "02.01.2006", "2006/01/02",
	"2006-01-02 15:04:05 MST", "Mon Jan _2 15:04:05 MST 2006", "January 2 2006",
}

// setDate sets *dst from v when dst is unset and v parses; an unreadable
// date leaves it unknown.
func setDate(dst *time.Time, v string) {
	if !dst.IsZero() {
		return
	}
	v = strings.Replace(strings.TrimSpace(v), "-T", "T", 1) // "2019-05-17-T23:02:50Z"
	v = strings.TrimSuffix(v, " (UTC)")
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			*dst = t.UTC()
			return
		}
	}
	if f := strings.Fields(v); len(f) > 1 { // "2020-01-01 (YYYY-MM-DD)"
		setDate(dst, f[0])
	}
}

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
