package seocrawl

import (
	"net/url"
	"strings"
)

// normalize returns u in the one form the crawler compares URLs in:
// lower-case scheme and host, no default port, "/" for an empty path, no
// fragment and no empty query.
func normalize(u *url.URL) *url.URL {
	n := *u
	n.Scheme = strings.ToLower(n.Scheme)
	host := strings.TrimSuffix(strings.ToLower(n.Host), ":")
	switch {
	case n.Scheme == "http":
		host = strings.TrimSuffix(host, ":80")
	case n.Scheme == "https":
		host = strings.TrimSuffix(host, ":443")
	}
	n.Host = host
	n.Fragment, n.RawFragment = "", ""
	if n.Opaque == "" && n.Path == "" {
		n.Path, n.RawPath = "/", ""
	}
	if n.RawQuery == "" {
		n.ForceQuery = false
	}
	return &n
}

// isWeb reports whether u is an absolute http(s) URL, the only kind a
// crawl follows.
func isWeb(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Opaque == ""
}

// resolve reads href (as found in an attribute) relative to base and
// returns it normalized, or false when it is not an http(s) URL.
func resolve(base *url.URL, href string) (*url.URL, bool) {
	ref, err := url.Parse(strings.TrimSpace(href))
	if err != nil {
		return nil, false
	}
	u := normalize(base.ResolveReference(ref))
	return u, isWeb(u)
}

// origin is scheme://host, the scope of one robots.txt.
func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// pathQuery is the part of u that robots.txt rules are matched against.
func pathQuery(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}
