// Package domainname turns what a user typed into a validated domain name.
//
// Every endpoint that takes a domain name goes through Parse (or ParseHost for
// name server host names), so the whole service agrees on what a valid name
// is: surrounding space and one trailing dot removed, case and width folded by
// the UTS #46 mapping, each label held to the IDNA2008 registration rules
// (letters, digits and hyphens; no emoji or symbols; the Bidi and joiner
// rules), lengths checked on the ASCII form, and the name split at its ICANN
// public suffix. Failures are *Error values whose Reason can be shown to the
// user as is.
package domainname

import (
	"fmt"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Name is a validated domain name. Every field except Unicode is in ASCII
// form (A-labels for internationalised labels).
type Name struct {
	// ASCII is the whole name, lower case, without a trailing dot:
	// "www.xn--bcher-kva.co.uk".
	ASCII string
	// Unicode is the whole name with A-labels decoded: "www.bücher.co.uk".
	Unicode string
	// TLD is the ICANN public suffix, which may span several labels: "co.uk".
	TLD string
	// Registrable is the public suffix plus one label (eTLD+1):
	// "xn--bcher-kva.co.uk".
	Registrable string
	// Label is the label directly left of the public suffix: "xn--bcher-kva".
	Label string
}

// IsRegistrable reports whether the name is its own registrable domain, that
// is, has no labels left of Label.
func (n Name) IsRegistrable() bool { return n.ASCII == n.Registrable }

// IsPlainLabelTLD reports whether the name is exactly label.tld with a
// single-label public suffix ("example.com", but not "example.co.uk" or
// "www.example.com"). Only such names are also searched on other TLDs.
func (n Name) IsPlainLabelTLD() bool {
	return n.IsRegistrable() && !strings.Contains(n.TLD, ".")
}

// Parse normalises and validates a domain name typed by a user, registrable
// ("example.co.uk") or below ("www.example.co.uk"). Besides the checks of
// ParseHost, the name must end in a top-level domain known to the ICANN
// section of the public suffix list (otherwise the error wraps ErrUnknownTLD)
// and must not itself be a public suffix such as "com" or "co.uk" (the error
// wraps ErrPublicSuffix). The returned error is always an *Error.
func Parse(input string) (Name, error) {
	ascii, uni, reason := normalize(input)
	if reason != "" {
		return Name{}, &Error{Input: input, Reason: reason}
	}
	if !strings.Contains(ascii, ".") {
		if _, icann := publicsuffix.PublicSuffix(ascii); icann {
			return Name{}, &Error{Input: input, Reason: publicSuffix, Err: ErrPublicSuffix}
		}
		return Name{}, &Error{Input: input, Reason: singleLabel}
	}
	suffix, ok := icannSuffix(ascii)
	if !ok {
		tld := ascii[strings.LastIndexByte(ascii, '.')+1:]
		return Name{}, &Error{
			Input:  input,
			Reason: fmt.Sprintf("unknown top-level domain %s", quote(tld)),
			Err:    ErrUnknownTLD,
		}
	}
	if suffix == ascii {
		return Name{}, &Error{Input: input, Reason: publicSuffix, Err: ErrPublicSuffix}
	}
	rest := ascii[:len(ascii)-len(suffix)-1]
	label := rest[strings.LastIndexByte(rest, '.')+1:]
	return Name{
		ASCII:       ascii,
		Unicode:     uni,
		TLD:         suffix,
		Registrable: label + "." + suffix,
		Label:       label,
	}, nil
}

// ParseQuery reads what a person types into a search box: a domain name
// ("MyStartup.io"), or a word or words without a TLD ("My Startup"), read
// as one label on defaultTLD ("mystartup.com"). Spaces are dropped, as a
// person means them; the rest is Parse's.
func ParseQuery(input, defaultTLD string) (Name, error) {
	q := strings.Join(strings.Fields(input), "")
	if q != "" && !strings.ContainsFunc(q, isDot) {
		q += "." + defaultTLD
	}
	return Parse(q)
}

// ParseHost normalises and validates a host name that need not be
// registrable, such as the name server "ns1.example.net", and returns its
// ASCII form. It applies the same rules as Parse except the public suffix
// list: at least two labels and a top-level domain that is not all digits.
// The returned error is always an *Error.
func ParseHost(input string) (string, error) {
	ascii, _, reason := normalize(input)
	if reason == "" && !strings.Contains(ascii, ".") {
		reason = singleLabel
	}
	if reason != "" {
		return "", &Error{Input: input, Reason: reason}
	}
	return ascii, nil
}

// ParseTLD normalises a top-level domain as people type it ("COM", ".com",
// "рф") and returns its ASCII form ("com", "xn--p1ai"). Any syntactically
// valid suffix passes, listed or not: whether the service sells it is the
// caller's question. The returned error is always an *Error.
func ParseTLD(input string) (string, error) {
	if isLowerLetters(input) {
		return input, nil // already its own ASCII form, as most requests send it
	}
	ascii, _, reason := normalize(strings.TrimPrefix(strings.TrimSpace(input), "."))
	if reason != "" {
		return "", &Error{Input: input, Reason: reason}
	}
	return ascii, nil
}

// isLowerLetters says s is one label of 1 to 63 letters a-z: a TLD that
// normalising would return unchanged.
func isLowerLetters(s string) bool {
	if s == "" || len(s) > maxLabelLen {
		return false
	}
	for i := range len(s) {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// WithTLD returns the registrable name label.tld, for building the sibling
// names of a search ("example" on "net", "bücher" on "de"). label must be a
// single label and tld a public suffix; either may be in Unicode or ASCII
// form.
func WithTLD(label, tld string) (Name, error) {
	input := label + "." + tld
	if strings.ContainsFunc(label, isDot) {
		return Name{}, &Error{Input: input, Reason: fmt.Sprintf("label %s contains a dot", quote(label))}
	}
	n, err := Parse(input)
	if err != nil {
		return Name{}, err
	}
	if !n.IsRegistrable() {
		return Name{}, &Error{Input: input, Reason: fmt.Sprintf("%s is not a public suffix", quote(tld))}
	}
	return n, nil
}

// publicSuffix is the reason given for a name that is a public suffix.
const publicSuffix = "is a public suffix, not a registrable name"

// icannSuffix returns the ICANN public suffix of the ASCII name, and false
// when its top-level domain is not in the list.
//
// publicsuffix.PublicSuffix answers with the longest matching rule from
// either section of the list and reports whether that rule is an ICANN one.
// A private rule (blogspot.com, herokuapp.com) is run by a company, not a
// registry, so its leading labels are stripped one at a time, asking again
// each time, until the answer is an ICANN rule. If none ever is, the list
// fell back to its implicit "*" rule for a top-level domain it does not know,
// which PublicSuffix also reports as not ICANN.
func icannSuffix(name string) (string, bool) {
	suffix, icann := publicsuffix.PublicSuffix(name)
	for !icann {
		i := strings.IndexByte(suffix, '.')
		if i < 0 {
			return "", false
		}
		suffix, icann = publicsuffix.PublicSuffix(suffix[i+1:])
	}
	return suffix, true
}
