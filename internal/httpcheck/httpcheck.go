// Package httpcheck is the http-headers free tool: where a URL redirects
// to, and the headers of the page it ends on, with the security headers
// present and missing.
package httpcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/domaind/domaind/internal/fetch"
)

// MaxRedirects is how many redirects Check follows.
const MaxRedirects = 10

// discardLimit is how much of a body is read (and thrown away) so that
// its connection can be reused.
const discardLimit = 64 << 10

// Bounds of Result.Headers, which is answered and cached: at most
// MaxHeaders values, each at most MaxHeaderValue bytes. (A response whose
// header is over fetch.MaxHeaderBytes in all is an error.)
const (
	MaxHeaders     = 100
	MaxHeaderValue = 1 << 10
)

const userAgent = "domaind-http-headers/1 (+https://github.com/domaind/domaind)"

// Errors of a redirect chain that does not end.
var (
	ErrRedirectLoop     = errors.New("redirect loop")
	ErrTooManyRedirects = fmt.Errorf("more than %d redirects", MaxRedirects)
)

// Result is what Check found.
type Result struct {
	URL         string     `json:"url"`
	FinalURL    string     `json:"final_url"`
	Status      int        `json:"status"`
	HTTPVersion string     `json:"http_version"` // "HTTP/1.1", "HTTP/2.0"
	Redirects   []Redirect `json:"redirects"`    // in the order followed; empty, not null
	// Headers are the final response's, by canonical name: at most
	// MaxHeaders values, taken in the order of their names, each cut to
	// MaxHeaderValue bytes; a name longer than that is left out.
	Headers http.Header `json:"headers"`
	// HeadersCut reports whether Headers left a value out or cut one.
	HeadersCut bool     `json:"headers_cut"`
	Security   Security `json:"security"`
	ResponseMS int64    `json:"response_ms"` // from the first request to the final response's headers
}

// Redirect is one hop: url answered status with a Location of location
// (resolved against url).
type Redirect struct {
	URL      string `json:"url"`
	Status   int    `json:"status"`
	Location string `json:"location"`
}

// Security lists the security headers of the final response (from
// SecurityHeaders) that it sends and that it lacks, in the order of
// SecurityHeaders. Strict-Transport-Security is missing only from an https
// response (browsers ignore it over http), and X-Frame-Options is not
// missing when a Content-Security-Policy sets frame-ancestors (which
// supersedes it).
type Security struct {
	Present []string `json:"present"`
	Missing []string `json:"missing"`
}

// SecurityHeaders are the headers Security reports on.
var SecurityHeaders = []string{
	"Content-Security-Policy",
	"Permissions-Policy",
	"Referrer-Policy",
	"Strict-Transport-Security",
	"X-Content-Type-Options",
	"X-Frame-Options",
}

// Check sends GET to rawURL through c and follows its redirects itself,
// checking every target with c.Check, so that a chain which leads to a
// refused address stops there. A refused URL (the first or a redirect's)
// is returned as the *fetch.BlockedError; a chain that loops or goes on
// past MaxRedirects is ErrRedirectLoop or ErrTooManyRedirects.
func Check(ctx context.Context, c *fetch.Client, rawURL string) (*Result, error) {
	u, err := c.Check(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	hc := *c.HTTP()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	res := &Result{URL: u.String(), Redirects: []Redirect{}}
	seen := map[string]bool{}
	start := time.Now()
	for {
		seen[u.String()] = true
		hop, err := get(ctx, &hc, u)
		if err != nil {
			return nil, err
		}
		loc := redirectLocation(hop)
		if loc == "" {
			res.FinalURL = u.String()
			res.Status = hop.StatusCode
			res.HTTPVersion = hop.Proto
			res.Headers, res.HeadersCut = bounded(hop.Header)
			res.Security = security(hop.Header, u.Scheme == "https")
			res.ResponseMS = time.Since(start).Milliseconds()
			return res, nil
		}
		ref, err := url.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("redirect from %s: Location %q is not a URL", u, loc)
		}
		next := u.ResolveReference(ref)
		res.Redirects = append(res.Redirects, Redirect{u.String(), hop.StatusCode, next.String()})
		switch {
		case seen[next.String()]:
			return nil, fmt.Errorf("%w: %s redirects back to %s", ErrRedirectLoop, u, next)
		case len(res.Redirects) > MaxRedirects:
			return nil, fmt.Errorf("%w, from %s", ErrTooManyRedirects, res.URL)
		}
		if u, err = c.Check(ctx, next.String()); err != nil {
			return nil, err
		}
	}
}

// get sends one GET and reads a little of the body, to let the connection
// be reused.
func get(ctx context.Context, hc *http.Client, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	res, err := hc.Do(req)
	if err != nil {
		if be, ok := errors.AsType[*fetch.BlockedError](err); ok {
			return nil, be
		}
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	io.CopyN(io.Discard, res.Body, discardLimit)
	res.Body.Close()
	return res, nil
}

// bounded returns h within MaxHeaders and MaxHeaderValue (see
// Result.Headers), and whether anything was left out or cut.
func bounded(h http.Header) (http.Header, bool) {
	out := http.Header{}
	n, cut := 0, false
	for _, name := range slices.Sorted(maps.Keys(h)) {
		if len(name) > MaxHeaderValue {
			cut = true
			continue
		}
		for _, v := range h[name] {
			if n == MaxHeaders {
				return out, true
			}
			if len(v) > MaxHeaderValue {
				end := MaxHeaderValue
				for end > 0 && !utf8.RuneStart(v[end]) {
					end--
				}
				v, cut = v[:end], true
			}
			out[name] = append(out[name], v)
			n++
		}
	}
	return out, cut
}

// redirectLocation is the Location res redirects to, or "" when it is not
// a redirect (a 3xx without a Location included).
func redirectLocation(res *http.Response) string {
	switch res.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return res.Header.Get("Location")
	}
	return ""
}

func security(h http.Header, https bool) Security {
	s := Security{Present: []string{}, Missing: []string{}}
	for _, name := range SecurityHeaders {
		switch {
		case h.Get(name) != "":
			s.Present = append(s.Present, name)
		case name == "Strict-Transport-Security" && !https:
		case name == "X-Frame-Options" && setsFrameAncestors(h.Values("Content-Security-Policy")):
		default:
			s.Missing = append(s.Missing, name)
		}
	}
	return s
}

// setsFrameAncestors reports whether a Content-Security-Policy has a
// frame-ancestors directive.
func setsFrameAncestors(policies []string) bool {
	for _, p := range policies {
		for d := range strings.SplitSeq(p, ";") {
			name, _, _ := strings.Cut(strings.TrimSpace(d), " ")
			if strings.EqualFold(name, "frame-ancestors") {
				return true
			}
		}
	}
	return false
}
