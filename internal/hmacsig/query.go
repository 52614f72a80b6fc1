package hmacsig

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// CanonicalQuery returns the canonical form of a raw query string (without
// the leading "?"), the third line of the canonical string:
//
//   - split at "&" into pairs, dropping empty ones ("a=1&&b=2");
//   - split each pair at its first "=" (a key without "=" has an empty value);
//   - decode each key and value as a URL query is decoded: "%XX" escapes
//     (either case of hex), and "+" as a space;
//   - sort ascending by key and, on equal keys, by value, comparing the
//     decoded UTF-8 bytes;
//   - encode each key and value as JavaScript's encodeURIComponent does,
//     and also ! ' ( ) * — that is, every byte but A–Z a–z 0–9 - _ . ~
//     becomes "%XX" with uppercase hex;
//   - join as "key=value" with "&".
//
// "+" means a space because that is what it means to the code that reads the
// query (net/url, and so gin's c.Query, and URLSearchParams in a browser):
// the signature then covers the values the handler acts on, and a client
// that builds its query with url.Values.Encode or URLSearchParams (which
// write a space as "+") signs what it means. A literal plus is sent as %2B.
//
// The result is its own canonical form, and the same pairs in any order or
// encoding give the same result. A malformed escape or a decoded key or value
// that is not UTF-8 (which encodeURIComponent cannot produce) is an error
// wrapping ErrBadQuery.
func CanonicalQuery(rawQuery string) (string, error) {
	type pair struct{ key, value string }
	var pairs []pair
	for part := range strings.SplitSeq(rawQuery, "&") {
		if part == "" {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(part, "=")
		key, err := decode(rawKey)
		if err != nil {
			return "", err
		}
		value, err := decode(rawValue)
		if err != nil {
			return "", err
		}
		pairs = append(pairs, pair{key, value})
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(strings.Compare(a.key, b.key), strings.Compare(a.value, b.value))
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		encode(&b, p.key)
		b.WriteByte('=')
		encode(&b, p.value)
	}
	return b.String(), nil
}

func decode(s string) (string, error) {
	d, err := url.QueryUnescape(s)
	if err != nil {
		return "", fmt.Errorf("%w: %q: malformed percent escape", ErrBadQuery, s)
	}
	if !utf8.ValidString(d) {
		return "", fmt.Errorf("%w: %q: decodes to bytes that are not UTF-8", ErrBadQuery, s)
	}
	return d, nil
}

const upperHex = "0123456789ABCDEF"

func encode(b *strings.Builder, s string) {
	for i := range len(s) {
		c := s[i]
		if unreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
	}
}

// unreserved reports whether c is left as it is: RFC 3986's unreserved
// characters, which are encodeURIComponent's minus ! ' ( ) *.
func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~'
}
