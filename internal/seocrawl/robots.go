package seocrawl

import (
	"bytes"
	"strings"
)

// robotsAgent is the product token the crawler answers to in robots.txt.
const robotsAgent = "domaind"

// robotsMaxBytes is how much of a robots.txt is read; RFC 9309 asks
// crawlers to parse at least 500 KiB.
const robotsMaxBytes = 512 << 10

// robotsRules are the rules of a robots.txt that apply to the crawler.
type robotsRules struct {
	disallowAll bool
	rules       []robotsRule
}

type robotsRule struct {
	allow   bool
	pattern string // percent-encoding normalized
}

// allowAll and disallowAll are what RFC 9309 says to assume when a
// robots.txt is unavailable (4xx) or unreachable (5xx, network error).
var (
	allowAll    = &robotsRules{}
	disallowAll = &robotsRules{disallowAll: true}
)

// robotsForStatus is the rules for a robots.txt that answered status with
// body (RFC 9309 §2.3.1): 2xx is parsed, 4xx and too many redirects allow
// everything, anything else (5xx) disallows everything.
func robotsForStatus(status int, body []byte) *robotsRules {
	switch {
	case status >= 200 && status < 300:
		return parseRobots(body, robotsAgent)
	case status >= 300 && status < 500:
		return allowAll
	default:
		return disallowAll
	}
}

// parseRobots returns the rules of the groups of body that name agent, or
// of the "*" groups when none does (RFC 9309 §2.2.1). Groups naming the
// same agent are merged; user-agent values are compared by product token,
// case-insensitively; rules before any user-agent line are ignored.
func parseRobots(body []byte, agent string) *robotsRules {
	body = bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF"))
	var (
		own, star         []robotsRule
		haveOwn, haveStar bool
		inOwn, inStar     bool
		readingAgents     bool
	)
	for line := range strings.Lines(string(body)) {
		line, _, _ = strings.Cut(line, "#")
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.ToLower(strings.TrimSpace(key))
		value = strings.TrimSpace(value)
		switch key {
		case "user-agent":
			if !readingAgents {
				inOwn, inStar, readingAgents = false, false, true
			}
			switch {
			case value == "*":
				inStar, haveStar = true, true
			case strings.EqualFold(productToken(value), agent):
				inOwn, haveOwn = true, true
			}
		case "allow", "disallow":
			readingAgents = false
			if value == "" {
				continue // an empty rule restricts nothing
			}
			r := robotsRule{allow: key == "allow", pattern: normalizeEncoding(value)}
			if inOwn {
				own = append(own, r)
			}
			if inStar {
				star = append(star, r)
			}
		}
	}
	switch {
	case haveOwn:
		return &robotsRules{rules: own}
	case haveStar:
		return &robotsRules{rules: star}
	default:
		return allowAll
	}
}

// productToken is the leading run of letters, '-' and '_' of a user-agent
// value ("Domaind/1.0" is "Domaind").
func productToken(v string) string {
	for i := 0; i < len(v); i++ {
		c := v[i] | 0x20
		if (c < 'a' || c > 'z') && v[i] != '-' && v[i] != '_' {
			return v[:i]
		}
	}
	return v
}

// allowed reports whether the rules let the crawler fetch pathQuery (an
// escaped path with its query). The matching rule with the longest
// pattern wins; between an allow and a disallow rule of the same length,
// allow wins; no matching rule means allowed. /robots.txt is always
// allowed.
func (r *robotsRules) allowed(pathQuery string) bool {
	if pathQuery == "/robots.txt" {
		return true
	}
	if r.disallowAll {
		return false
	}
	path := normalizeEncoding(pathQuery)
	best, allow := -1, true
	for _, rule := range r.rules {
		if len(rule.pattern) < best || (len(rule.pattern) == best && allow) {
			continue
		}
		if matchPattern(rule.pattern, path) {
			best, allow = len(rule.pattern), rule.allow
		}
	}
	return allow
}

// matchPattern reports whether a robots.txt pattern matches the start of
// path: '*' matches any run of characters, a final '$' anchors the pattern
// at the end of path. Taking each piece between stars at its leftmost
// place is enough (a later place never helps), so a match costs one scan
// of path per piece, however hostile the pattern.
func matchPattern(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	first, rest, wild := strings.Cut(pattern, "*")
	if !strings.HasPrefix(path, first) {
		return false
	}
	pos := len(first)
	if !wild {
		return !anchored || pos == len(path)
	}
	for {
		piece, more, found := strings.Cut(rest, "*")
		if !found {
			if anchored {
				return len(path)-pos >= len(piece) && strings.HasSuffix(path, piece)
			}
			return strings.Contains(path[pos:], piece)
		}
		i := strings.Index(path[pos:], piece)
		if i < 0 {
			return false
		}
		pos += i + len(piece)
		rest = more
	}
}

// normalizeEncoding gives patterns and paths one spelling of the same
// octets: hex digits of percent escapes in upper case, and bytes outside
// printable ASCII percent-encoded (so a UTF-8 pattern matches the encoded
// path).
func normalizeEncoding(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte('%')
			b.WriteString(strings.ToUpper(s[i+1 : i+3]))
			i += 2
		case c <= ' ' || c >= 0x7f:
			const hex = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
