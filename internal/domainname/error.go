package domainname

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// ErrUnknownTLD is wrapped by the *Error returned for a name whose top-level
// domain has no ICANN entry in the public suffix list, such as
// "example.notarealtld" or "printer.local".
var ErrUnknownTLD = errors.New("unknown top-level domain")

// ErrPublicSuffix is wrapped by the *Error returned for a name that is itself
// a public suffix, such as "com" or "co.uk", and so cannot be registered.
var ErrPublicSuffix = errors.New("name is a public suffix")

// Error reports why an input is not an acceptable domain name. Reason is
// written for the person who typed Input and can be sent to an API client
// verbatim. Err, when set, is a sentinel (ErrUnknownTLD, ErrPublicSuffix)
// that callers can test with errors.Is.
type Error struct {
	Input  string
	Reason string
	Err    error
}

// Error returns the quoted input, shortened when long, followed by the reason,
// for example `"exa mple.com": contains a space`.
func (e *Error) Error() string {
	return quote(e.Input) + ": " + e.Reason
}

// Unwrap returns the sentinel the error carries, if any.
func (e *Error) Unwrap() error { return e.Err }

// maxQuoted is how many bytes of user input a message repeats, so that a
// hostile megabyte of input does not come back in a 400 response.
const maxQuoted = 100

// quote returns s as a Go-quoted string (control and invisible characters
// escaped), cut at maxQuoted bytes with a trailing ellipsis.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}
