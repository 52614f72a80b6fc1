package domainname

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

const (
	// maxInputLen bounds the work done on hostile input. It leaves room for
	// a 253-octet name typed in full-width or other multi-byte forms.
	maxInputLen = 1024
	maxNameLen  = 253
	maxLabelLen = 63
)

var (
	// registration is the authority on the final form: the UTS #46 mapping
	// of a lookup (case, width, normalisation), then the checks required for
	// registration: STD3 ASCII rules, hyphens, joiners, the Bidi rule and DNS
	// lengths. Non-transitional, so "ß" stays "ß".
	registration = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.VerifyDNSLength(true), idna.Transitional(false))

	// mapping applies the same UTS #46 mapping without caring about errors;
	// its output is what the label checks below inspect. idna returns the
	// mapped string even when it reports an error.
	mapping = idna.New(idna.MapForLookup(), idna.Transitional(false))

	// withoutBidi and withoutJoiners tell which rule registration refused
	// when none of the label checks did.
	withoutBidi    = idna.New(idna.MapForLookup(), idna.VerifyDNSLength(true), idna.Transitional(false))
	withoutJoiners = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.VerifyDNSLength(true), idna.Transitional(false), idna.CheckJoiners(false))
)

// normalize returns the ASCII and Unicode forms of the host name typed as
// input, or the reason it is not one. It implements everything ParseHost
// promises except the two-label minimum, which Parse and ParseHost report
// differently.
func normalize(input string) (ascii, uni, reason string) {
	s := strings.TrimSpace(input)
	switch {
	case s == "":
		return "", "", "is empty"
	case len(s) > maxInputLen:
		return "", "", "is too long to be a domain name"
	case !utf8.ValidString(s):
		return "", "", "is not valid UTF-8 text"
	}
	if reason := spaceReason(s); reason != "" {
		return "", "", reason
	}
	if reason := urlReason(s); reason != "" {
		return "", "", reason
	}
	if reason := charReason(s); reason != "" {
		return "", "", reason
	}

	s = strings.TrimSuffix(strings.Map(toDot, s), ".")
	if s == "" {
		return "", "", "does not contain a domain name"
	}
	s = lowerASCII(s)
	labels := strings.Split(s, ".")
	asciiLabels := make([]string, len(labels))
	for i, l := range labels {
		a, reason := checkLabel(l)
		if reason != "" {
			return "", "", reason
		}
		asciiLabels[i] = a
	}
	joined := strings.Join(asciiLabels, ".")
	if len(joined) > maxNameLen {
		if strings.Contains(joined, "xn--") {
			return "", "", fmt.Sprintf("is %d characters long in its ASCII (xn--) form; the limit is %d", len(joined), maxNameLen)
		}
		return "", "", fmt.Sprintf("is %d characters long; the limit is %d", len(joined), maxNameLen)
	}
	if tld := asciiLabels[len(asciiLabels)-1]; isDigits(tld) {
		return "", "", fmt.Sprintf("top-level domain %s is all digits", quote(tld))
	}

	ascii, err := registration.ToASCII(s)
	if err != nil {
		return "", "", idnaReason(s)
	}
	uni, err = registration.ToUnicode(ascii)
	if err != nil || ascii != joined {
		return "", "", invalidIDN
	}
	if back, err := registration.ToASCII(uni); err != nil || back != ascii {
		return "", "", invalidIDN
	}
	return ascii, uni, ""
}

// singleLabel is the reason given for a name without a dot.
const singleLabel = `is a single label; give a full domain name such as "example.com"`

// invalidIDN is the reason given when the idna package refuses a name for a
// cause the checks here do not name more precisely.
const invalidIDN = "is not a valid internationalised domain name"

// idnaReason names the IDNA rule the mapped, lower-cased name s breaks, once
// the label checks have passed it.
func idnaReason(s string) string {
	if _, err := withoutBidi.ToASCII(s); err == nil {
		return "mixes right-to-left and left-to-right text in a way domain names do not allow (RFC 5893)"
	}
	if _, err := withoutJoiners.ToASCII(s); err == nil {
		return "uses a zero-width joiner or non-joiner where it is not allowed"
	}
	return invalidIDN
}

// spaceReason refuses white space inside the (already trimmed) input.
func spaceReason(s string) string {
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Zs, r):
			return "contains a space"
		case unicode.IsSpace(r):
			return fmt.Sprintf("contains white space (%U)", r)
		}
	}
	return ""
}

// urlReason refuses URLs, e-mail addresses, ports and IP addresses, naming
// the parts to remove so that the user can fix the input at once.
func urlReason(s string) string {
	host := s
	var scheme, userinfo, port, path string
	if i := strings.IndexByte(host, ':'); i > 0 && isScheme(host[:i]) {
		// "https://", but also the mistyped "http:/" and "http:\\".
		if rest := strings.TrimLeft(host[i+1:], `/\`); len(rest) < len(host)-i-1 {
			scheme, host = host[:len(host)-len(rest)], rest
		}
	}
	if i := strings.IndexAny(host, `/?#\`); i >= 0 {
		host, path = host[:i], host[i:]
	}
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		userinfo, host = host[:i+1], host[i+1:]
	}
	bare, bracketed := host, false
	if strings.HasPrefix(host, "[") {
		if i := strings.IndexByte(host, ']'); i > 0 && (i == len(host)-1 || host[i+1] == ':') {
			bare, port, bracketed = host[1:i], host[i+1:], true
		}
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 && strings.Count(host, ":") == 1 && isDigits(host[i+1:]) {
		bare, port = host[:i], host[i:]
	}
	extra := scheme != "" || userinfo != "" || port != "" || path != ""
	if _, err := netip.ParseAddr(strings.TrimSuffix(bare, ".")); err == nil {
		if !extra {
			return "is an IP address, not a domain name"
		}
		return fmt.Sprintf("contains the IP address %s; give a domain name instead", quote(bare))
	}
	if bracketed {
		// Brackets around something that is not an IP address: leave them
		// to charReason.
		bare, port = host, ""
		extra = scheme != "" || userinfo != "" || path != ""
	}
	if !extra {
		return ""
	}
	if bare == "" {
		return "does not contain a domain name"
	}

	var remove []string
	what := "looks like a URL"
	for _, p := range []string{scheme, userinfo, port, path} {
		if p != "" {
			remove = append(remove, quote(p))
		}
	}
	if scheme == "" && len(remove) == 1 {
		switch {
		case userinfo != "":
			what = "looks like an e-mail address"
		case port != "":
			what = "contains a port number"
		case path[0] == '?':
			what = "contains a query string"
		case path[0] == '#':
			what = "contains a fragment"
		default:
			what = "contains a path"
		}
	}
	return fmt.Sprintf("%s; remove %s and give the domain name only", what, joinAnd(remove))
}

// charReason refuses, by what was typed, the characters that can never be
// part of a domain name: controls, invisible characters, ASCII punctuation
// and symbols (emoji included). Characters the UTS #46 mapping would turn
// into something else are judged after mapping, in checkLabel.
func charReason(s string) string {
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			if !isLDH(unicode.ToLower(r)) && r != '.' {
				if unicode.IsControl(r) {
					return fmt.Sprintf("contains a control character (%U)", r)
				}
				return fmt.Sprintf("contains %s; use only letters, digits, hyphens and dots", quote(string(r)))
			}
		case unicode.IsControl(r):
			return fmt.Sprintf("contains a control character (%U)", r)
		case isInvisible(r):
			return fmt.Sprintf("contains an invisible character (%U)", r)
		case unicode.Is(unicode.S, r):
			return fmt.Sprintf("contains the symbol %s; emoji and symbols are not allowed in domain names", quote(string(r)))
		}
	}
	return ""
}

// checkLabel checks one label of the lower-cased name and returns its ASCII
// form.
func checkLabel(label string) (ascii, reason string) {
	if label == "" {
		return "", "contains an empty label (two dots in a row, or a dot at the start)"
	}
	if strings.HasPrefix(label, "xn--") {
		return checkALabel(label)
	}
	u, _ := mapping.ToUnicode(label)
	if reason := checkULabel(label, u); reason != "" {
		return "", reason
	}
	a, err := idna.Punycode.ToASCII(u)
	if err != nil {
		return "", fmt.Sprintf("label %s cannot be encoded in ASCII", quote(label))
	}
	if len(a) > maxLabelLen {
		if a != u {
			return "", fmt.Sprintf("label %s is %d characters long in its ASCII (xn--) form; the limit is %d", quote(label), len(a), maxLabelLen)
		}
		return "", fmt.Sprintf("label %s is %d characters long; the limit is %d", quote(label), len(a), maxLabelLen)
	}
	return a, ""
}

// checkALabel checks a label typed in its ASCII-compatible (xn--) form: it
// must be valid punycode, the standard encoding of a valid label that needs
// no mapping.
func checkALabel(label string) (ascii, reason string) {
	u, err := idna.Punycode.ToUnicode(label)
	if err != nil || u == "" {
		return "", fmt.Sprintf("label %s is not valid punycode", quote(label))
	}
	if mapped, _ := mapping.ToUnicode(u); mapped != u {
		return "", fmt.Sprintf("label %s decodes to %s, which is not in normalised form", quote(label), quote(u))
	}
	if reason := checkULabel(label, u); reason != "" {
		return "", reason
	}
	if a, err := idna.Punycode.ToASCII(u); err != nil || a != label {
		return "", fmt.Sprintf("label %s is not the standard encoding of %s", quote(label), quote(u))
	}
	if len(label) > maxLabelLen {
		return "", fmt.Sprintf("label %s is %d characters long; the limit is %d", quote(label), len(label), maxLabelLen)
	}
	return label, ""
}

// checkULabel checks the mapped Unicode form u of the label typed as label
// against the hyphen rules and the IDNA2008 repertoire.
func checkULabel(label, u string) string {
	if u == "" {
		return fmt.Sprintf("label %s is empty once normalised", quote(label))
	}
	runes := []rune(u)
	switch {
	case runes[0] == '-':
		return fmt.Sprintf("label %s starts with a hyphen", quote(label))
	case runes[len(runes)-1] == '-':
		return fmt.Sprintf("label %s ends with a hyphen", quote(label))
	case len(runes) >= 4 && runes[2] == '-' && runes[3] == '-':
		return fmt.Sprintf(`label %s has "--" in the third and fourth positions, which is reserved for xn-- labels`, quote(label))
	case unicode.In(runes[0], unicode.Mn, unicode.Mc):
		return fmt.Sprintf("label %s starts with a combining mark", quote(label))
	}
	for i, r := range runes {
		switch {
		case isLDH(r):
		case r == '\u200c' || r == '\u200d':
			// Zero-width non-joiner and joiner: the joiner rules of the
			// registration profile decide.
		case unicode.Is(unicode.S, r):
			return fmt.Sprintf("label %s contains the symbol %s; emoji and symbols are not allowed in domain names", quote(label), quote(string(r)))
		case unicode.Is(disallowed2008, r):
			return notAllowed(label, r)
		case contextual(r):
			if !contextOK(runes, i) {
				return fmt.Sprintf("label %s contains %s (%U) in a position where it is not allowed", quote(label), quote(string(r)), r)
			}
		case unicode.IsLetter(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd):
		default:
			return notAllowed(label, r)
		}
	}
	return ""
}

// notAllowed is the reason given for a character outside the IDNA2008
// repertoire.
func notAllowed(label string, r rune) string {
	return fmt.Sprintf("label %s contains %s (%U), which is not allowed in domain names", quote(label), quote(string(r)), r)
}

// disallowed2008 holds the letters and marks that IDNA2008 (RFC 5892)
// disallows although their general category would pass, and that the UTS #46
// tables of the idna package accept: the exceptions of section 2.6 and the
// old Hangul jamo of section 2.9.
var disallowed2008 = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x0640, Hi: 0x0640, Stride: 1},
		{Lo: 0x07fa, Hi: 0x07fa, Stride: 1},
		{Lo: 0x1100, Hi: 0x11ff, Stride: 1},
		{Lo: 0x302e, Hi: 0x302f, Stride: 1},
		{Lo: 0x3031, Hi: 0x3035, Stride: 1},
		{Lo: 0x303b, Hi: 0x303b, Stride: 1},
		{Lo: 0xa960, Hi: 0xa97f, Stride: 1},
		{Lo: 0xd7b0, Hi: 0xd7ff, Stride: 1},
	},
}

// contextual reports whether r is one of the characters IDNA2008 allows only
// in context (CONTEXTO, RFC 5892 appendix A), or an exception it allows
// outright although its category is not a letter or digit.
func contextual(r rune) bool {
	switch {
	case r == '\u00b7', r == '\u05f3', r == '\u05f4', r == '\u30fb',
		r == '\u0f0b', r == '\u3007',
		'\u0660' <= r && r <= '\u0669', '\u06f0' <= r && r <= '\u06f9':
		return true
	}
	return false
}

// contextOK applies the RFC 5892 appendix A rule for runes[i]. The Greek
// keraia (U+0375) is not handled here: it is a symbol and refused as one.
func contextOK(runes []rune, i int) bool {
	r := runes[i]
	switch {
	case r == '\u00b7': // Catalan middle dot: only in "l·l".
		return i > 0 && i < len(runes)-1 && runes[i-1] == 'l' && runes[i+1] == 'l'
	case r == '\u05f3' || r == '\u05f4': // Hebrew geresh and gershayim.
		return i > 0 && unicode.Is(unicode.Hebrew, runes[i-1])
	case r == '\u30fb': // Katakana middle dot: with Japanese script.
		for _, c := range runes {
			if c != r && unicode.In(c, unicode.Hiragana, unicode.Katakana, unicode.Han) {
				return true
			}
		}
		return false
	case '\u0660' <= r && r <= '\u0669': // Arabic-Indic digits: not mixed...
		return !strings.ContainsFunc(string(runes), func(c rune) bool { return '\u06f0' <= c && c <= '\u06f9' })
	case '\u06f0' <= r && r <= '\u06f9': // ...with extended Arabic-Indic ones.
		return !strings.ContainsFunc(string(runes), func(c rune) bool { return '\u0660' <= c && c <= '\u0669' })
	}
	return true // U+0F0B and U+3007 are allowed anywhere.
}

// isInvisible reports whether r is a default-ignorable character that the
// UTS #46 mapping would silently drop (soft hyphen, zero-width space,
// variation selectors, byte order mark). Such input is refused rather than
// quietly becoming a different name. The zero-width joiner and non-joiner
// are kept: some scripts need them and the joiner rules check them.
func isInvisible(r rune) bool {
	if r == '\u200c' || r == '\u200d' {
		return false
	}
	return unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// isScheme reports whether s looks like a URL scheme ("https", "ftp",
// "svn+ssh"). Dots, which RFC 3986 allows, are left out so that "example.com"
// in "example.com:/x" is not taken for one.
func isScheme(s string) bool {
	for i, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		case i > 0 && ('0' <= r && r <= '9' || r == '+' || r == '-'):
		default:
			return false
		}
	}
	return s != ""
}

// toDot maps the full stops that isDot accepts to ".".
func toDot(r rune) rune {
	if isDot(r) {
		return '.'
	}
	return r
}

// isDot reports whether r separates labels: "." or one of the full stops
// UTS #46 maps to it.
func isDot(r rune) bool {
	return r == '.' || r == '\u3002' || r == '\uff0e' || r == '\uff61'
}

// isLDH reports whether r is a lower-case letter, digit or hyphen: the ASCII
// repertoire of a label.
func isLDH(r rune) bool {
	return 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-'
}

// isDigits reports whether s is made of ASCII digits only.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// lowerASCII lower-cases ASCII letters only, so that "XN--" is seen as an
// A-label prefix; the UTS #46 mapping folds the case of everything else.
func lowerASCII(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// joinAnd joins quoted parts as `"a"`, `"a" and "b"` or `"a", "b" and "c"`.
func joinAnd(parts []string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
