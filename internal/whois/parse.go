package whois

import (
	"bufio"
	"bytes"
	"fmt"
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
//
// It reads the layout families registries use rather than each registry's
// format: "Key: value" lines (with dot leaders, tabs or brackets around
// the key, "a. [Domain Name]"), headings with their values on the lines
// below ("Registrar:", "Name servers", "[Registrar]"), paragraphs that
// describe a contact or a registrar ("nic-hdl:", "person:") and sentences
// ("Record created on 2005-04-15"), with keys in several languages. What
// only one registry does is in quirks.
func Parse(domain string, text []byte) (domaininfo.Record, error) {
	a, err := parse(domain, text)
	return a.rec, err
}

// block is a heading and the lines under it, or a paragraph whose first
// key says what it describes ("person:", "registrar: X").
type block struct {
	kind  kind
	field field // what its bare value lines fill; fieldNone: nothing
	// paragraph says the block was opened by a paragraph's first key with
	// a value: it lasts to the blank line.
	paragraph bool
	// keepOpen lets a server-list heading's values follow a blank line.
	keepOpen bool
	indent   int // indentation of the block's lines, -1 until the first
	lines    int // lines read in the block
	// named says the block gave the registrar (or registrant) a name;
	// fromHeading that the name is the heading's own value, which a
	// "Name:" inside replaces ("Registrar: MARK-0292" then "Name: ...").
	named, fromHeading bool
}

// parser is the state of one answer's reading.
type parser struct {
	domain        string
	quirk         quirk
	a             answer
	registrantOrg string
	found         bool
	blk           *block
	paraStart     bool
	// cont is a field whose values go on below its key on more indented
	// lines ("nameservers: ns1.example.net." then "   ns2.example.net.").
	cont       field
	contIndent int
}

var (
	// bracketKey is "[Domain Name]  EXAMPLE.JP", "a. [Domain Name] …",
	// "a [Domain Name] …" and "[Registrar]".
	bracketKey = regexp.MustCompile(`^(?:[a-z]\.?\s+)?\[([^\]\s][^\]]{0,59})\]\s*(.*)$`)
	// colonKey is "Key: value" with a key of words in any script; dot
	// leaders ("domain.....: x") and numbering ("Name Server 1:") are
	// allowed, a "://" after the colon is a value line's URL.
	colonKey = regexp.MustCompile(`^([\p{L}\p{N}][\p{L}\p{M}\p{N} /().,'&_-]{0,80}?)\s*:+\s*(.*)$`)
	// dateInKey rejects "keys" that are the front of a sentence with a time
	// in it: "Record created on 2005-04-15 21:43:27".
	dateInKey = regexp.MustCompile(`\d{4}|\d[./-]\d`)
	// clockHour and clockMinutes are the two sides of the colon in a time
	// ("… Sun Mar 30 23:59:00 2014"), which splits no key from its value.
	clockHour    = regexp.MustCompile(`\s\d{1,2}$`)
	clockMinutes = regexp.MustCompile(`^\d{2}\b`)
	// ruleLine is a line of dashes or stars under a heading.
	ruleLine = regexp.MustCompile(`^[-=*_+]{3,}$`)
	// untilDate is the date in "Connected (2024/06/30)".
	untilDate = regexp.MustCompile(`\(([^)]*\d[^)]*)\)`)
)

func parse(domain string, text []byte) (answer, error) {
	p := parser{domain: domain, paraStart: true}
	if strings.Contains(domain, ".") {
		p.quirk = quirkOf(domain)
	}
	p.a.rec.Source = domaininfo.SourceFallback
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	for sc.Scan() {
		raw := strings.TrimRight(strings.ToValidUTF8(sc.Text(), ""), "\r")
		if notFoundLine(raw, domain) {
			return p.a, fmt.Errorf("whois %s: %w", domain, domaininfo.ErrNotFound)
		}
		if err := p.line(raw); err != nil {
			return p.a, err
		}
	}
	if p.a.rec.Registrant == "" {
		p.a.rec.Registrant = p.registrantOrg
	}
	if !p.found {
		return p.a, fmt.Errorf("whois %s: no registration data recognised in the answer", domain)
	}
	if p.a.rec.Domain == "" {
		p.a.rec.Domain = domain
	}
	return p.a, nil
}

// line reads one line of the answer.
func (p *parser) line(raw string) error {
	trimmed := strings.TrimSpace(raw)
	switch {
	case trimmed == "":
		p.blank()
		return nil
	case strings.HasPrefix(trimmed, "%") || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, ">>>") ||
		ruleLine.MatchString(trimmed):
		return nil
	}
	indent := len(raw) - len(strings.TrimLeftFunc(raw, unicode.IsSpace))
	line := strings.TrimSpace(strings.TrimLeft(trimmed, "*")) // "** Domain Name: …"
	paraStart := p.paraStart
	p.paraStart = false
	if b := p.blk; b != nil {
		if b.indent < 0 {
			b.indent = indent
		} else if indent < b.indent {
			p.blk = nil
		}
	}

	if key, value, ok := splitKey(line); ok {
		p.cont = fieldNone
		return p.keyLine(key, value, p.fieldOf(key), indent, paraStart)
	}
	// Not a key line: a sentence with a date ("Record created on …"), a
	// heading without a colon ("Nameservers"), or a value under a heading.
	if f, v, ok := p.sentence(line); ok {
		return p.set(f, v)
	}
	if k := normalizeKey(line); p.open(k, p.fieldOf(k)) {
		p.cont = fieldNone
		return nil
	}
	return p.valueLine(line, indent)
}

// splitKey splits a key line into its normalised key and value; ok is
// false for a line that is not one.
func splitKey(line string) (key, value string, ok bool) {
	if m := bracketKey.FindStringSubmatch(line); m != nil {
		return normalizeKey(m[1]), strings.TrimSpace(m[2]), true
	}
	if m := colonKey.FindStringSubmatch(line); m != nil && !strings.HasPrefix(m[2], "//") && !dateInKey.MatchString(m[1]) &&
		!(clockHour.MatchString(m[1]) && clockMinutes.MatchString(m[2])) {
		return normalizeKey(m[1]), strings.TrimSpace(m[2]), true
	}
	if k, v, found := strings.Cut(line, "\t"); found { // SWITCH: "Domain name<TAB>example.ch"
		k = normalizeKey(k)
		if _, known := fields[k]; known {
			return k, strings.TrimSpace(v), true
		}
	}
	return "", "", false
}

// fieldOf is the field key fills at this registry.
func (p *parser) fieldOf(key string) field {
	if f, ok := p.quirk.keys[key]; ok {
		return f
	}
	return fields[key]
}

// blank ends a paragraph, and the block open in it unless it is a server
// list still waiting for its values.
func (p *parser) blank() {
	p.paraStart = true
	p.cont = fieldNone
	if p.blk != nil && !(p.blk.keepOpen && p.blk.lines == 0) {
		p.blk = nil
	}
}

// open opens the block a key standing alone starts, and reports whether
// it started one.
func (p *parser) open(key string, f field) bool {
	k, ok := blockKind(key, f)
	if !ok {
		return false
	}
	_, list := headings[key]
	p.blk = &block{kind: k, field: blockField(k, f), keepOpen: k == kindNS && list, indent: -1}
	return true
}

// blockField is what the bare value lines of a block of kind k, opened by
// a key of field f, fill.
func blockField(k kind, f field) field {
	switch k {
	case kindNS:
		return fieldNS
	case kindRegistrar:
		return fieldRegistrar
	case kindRegistrant:
		return fieldRegistrant
	case kindContact:
		return fieldNone
	}
	return f
}

// keyLine reads a "key: value" line (value may be empty).
func (p *parser) keyLine(key, value string, f field, indent int, paraStart bool) error {
	if value == "" {
		// A lone key that starts no block ends the one before it ("Address:"
		// under a registrant); a paragraph's block goes on to its blank line.
		if !p.open(key, f) && p.blk != nil && !p.blk.paragraph {
			p.blk = nil
		}
		return nil
	}
	if b := p.blk; b != nil {
		b.lines++
		if done, err := p.inBlock(b, key, value, f); done {
			return err
		}
	}
	if paraStart {
		if k, ok := headings[key]; ok && f == fieldNone { // "person: X", "nsset: NSS1"
			p.blk = &block{kind: k, field: blockField(k, f), paragraph: true, indent: -1}
			return nil
		}
		if k, ok := blockKind(key, f); ok && (k == kindRegistrar || k == kindRegistrant) {
			p.blk = &block{kind: k, field: blockField(k, f), paragraph: true, indent: -1}
			p.name(p.blk, value, true)
			p.found = true
			return nil
		}
	}
	if isEmailKey(key) {
		addEmail(&p.a.rec, value)
		p.found = true
		return nil
	}
	if f == fieldNS {
		p.cont, p.contIndent = fieldNS, indent
		if p.quirk.nsHandles {
			return nil
		}
	}
	return p.set(f, value)
}

// inBlock reads a key line inside a block; done says it was taken (or
// dropped) there. A contact's, registrar's or registrant's own keys stay
// in its block; a key of several words that names a field of the domain
// ("Name Server", "Domain Status") ends the block and is read as usual,
// a single word ("State", "Created") is the block's own.
func (p *parser) inBlock(b *block, key, value string, f field) (done bool, err error) {
	switch {
	case b.kind == kindPlain:
		return false, nil
	case isEmailKey(key):
		addEmail(&p.a.rec, value)
		p.found = true
		return true, nil
	case b.kind == kindNS && (nsKey(key) || f == fieldNS):
		p.addNameServers(value, true)
		return true, nil
	case (b.kind == kindRegistrar || b.kind == kindRegistrant) && (nameKeys[key] || f == b.field):
		p.name(b, value, false)
		p.found = true
		return true, nil
	case f != fieldNone && strings.Contains(key, " "):
		p.blk = nil
		return false, nil
	}
	return true, nil
}

// name gives the registrar or registrant named in block b.
func (p *parser) name(b *block, value string, fromHeading bool) {
	dst := &p.a.rec.Registrant
	if b.kind == kindRegistrar {
		dst, value = &p.a.rec.Registrar, registrarName(value)
	}
	value, _, _ = strings.Cut(value, "\t")
	switch {
	case redacted(value) || value == "":
	case *dst == "":
		*dst, b.fromHeading = value, fromHeading
	case b.fromHeading && !fromHeading:
		*dst, b.fromHeading = value, false
	}
	b.named = true
}

// valueLine reads a line that is not a key: a value under a heading or
// below a key with several values.
func (p *parser) valueLine(line string, indent int) error {
	if p.cont == fieldNS && indent > p.contIndent {
		p.addNameServers(line, false)
		return nil
	}
	p.cont = fieldNone
	b := p.blk
	if b == nil {
		return nil
	}
	b.lines++
	switch b.field {
	case fieldNS:
		p.addNameServers(strings.TrimPrefix(line, "- "), false)
	case fieldRegistrar, fieldRegistrant:
		if !b.named {
			p.name(b, line, false)
			p.found = true
		}
	case fieldStatus, fieldDomain, fieldCreated, fieldExpires, fieldUpdated:
		return p.set(b.field, line)
	}
	return nil
}

// sentence reads a line like "Record created on 2005-04-15 21:43:27" or
// "Registered on 30th April 2003": a date key of several words, then a
// date.
func (p *parser) sentence(line string) (field, string, bool) {
	lower := strings.ToLower(line)
	best := ""
	for k, f := range fields {
		if (f == fieldCreated || f == fieldExpires) && strings.Contains(k, " ") && len(k) > len(best) &&
			strings.HasPrefix(lower, k+" ") {
			if _, ok := parseDate(line[len(k)+1:], p.quirk.monthFirst); ok {
				best = k
			}
		}
	}
	if best == "" {
		return fieldNone, "", false
	}
	return fields[best], line[len(best)+1:], true
}

// set fills field f from value, where the answer had not filled it yet.
func (p *parser) set(f field, value string) error {
	if f == fieldNone || redacted(value) {
		return nil
	}
	rec := &p.a.rec
	switch f {
	case fieldDomain:
		if f := strings.Fields(value); rec.Domain == "" && len(f) > 0 {
			if h := hostname(f[0]); strings.Contains(h, ".") {
				rec.Domain = h
			}
		}
	case fieldRegistrar:
		if rec.Registrar == "" {
			rec.Registrar = registrarName(value)
		}
	case fieldRegistrant:
		if rec.Registrant == "" {
			rec.Registrant, _, _ = strings.Cut(value, "\t")
		}
	case fieldRegistrantOrg:
		if p.registrantOrg == "" {
			p.registrantOrg = value
		}
	case fieldCreated:
		p.setDate(&rec.Created, value)
	case fieldExpires:
		p.setDate(&rec.Expires, value)
	case fieldUpdated:
		p.setDate(&rec.Updated, value)
	case fieldStatus, fieldStateUntil:
		if notFoundStatus(value) {
			return fmt.Errorf("whois %s: %w", p.domain, domaininfo.ErrNotFound)
		}
		for part := range strings.SplitSeq(value, ",") {
			if s := status(part); s != "" && !slices.Contains(rec.Statuses, s) {
				rec.Statuses = append(rec.Statuses, s)
			}
		}
		if m := untilDate.FindStringSubmatch(value); m != nil && f == fieldStateUntil {
			p.setDate(&rec.Expires, m[1])
		}
	case fieldNS:
		p.addNameServers(value, true)
	case fieldReferral:
		if p.a.referral == "" {
			p.a.referral = serverAddr(value)
		}
	}
	p.found = true
	return nil
}

func (p *parser) setDate(dst *time.Time, v string) {
	if !dst.IsZero() {
		return
	}
	if t, ok := parseDate(v, p.quirk.monthFirst); ok {
		*dst = t
	}
}

func (p *parser) addNameServers(v string, keyed bool) {
	for _, h := range nameServers(v, keyed) {
		p.found = true
		if !slices.Contains(p.a.rec.Nameservers, h) {
			p.a.rec.Nameservers = append(p.a.rec.Nameservers, h)
		}
	}
}

// isEmailKey reports keys whose values are contact addresses.
func isEmailKey(key string) bool {
	return strings.Contains(key, "email") || strings.Contains(key, "e mail")
}
