// Package siteprobe tells whether a domain runs an active web site: the
// brokerage will not broker a domain that does.
//
// Probe fetches the home page through the SSRF-safe client of package fetch
// (which follows HTTP redirects, bounds the time and caps the body):
// https://<domain>/ first, then http://<domain>/ when https gives no answer
// (DNS failure, refused, timeout, TLS failure) or answers with an error
// status. Classify judges the answer by these rules, the first that holds
// deciding:
//
//  1. A status outside 2xx is not an active site (not_ok).
//  2. A page of a parking service or a domain marketplace is parked: ads on
//     the domain's traffic or an offer to sell it (Sedo, Bodis, ParkingCrew,
//     Above, Parklogic, GoDaddy and Afternic, Dan.com, HugeDomains,
//     Namecheap's parked page, Google AdSense for Domains...).
//  3. A registrar's or hosting company's placeholder is registrar_default
//     (cPanel, Plesk, "Future home of...", "coming soon").
//  4. A web server's page after installation is server_default (Apache's
//     "It works!", "Welcome to nginx!", IIS), and so is a directory listing
//     with nothing in it but the parent and cgi-bin/. A listing with entries
//     is active: the domain serves files.
//  5. A short page whose business is to send the browser elsewhere (meta
//     refresh, a script assigning location) is client_redirect, unless
//     where it goes settles it (GoDaddy's parked root page only redirects to
//     /lander; cPanel's to its default page). Probe follows such a redirect,
//     twice at most, and judges the page it leads to; a third is left as
//     client_redirect, not active.
//  6. A page with fewer than 10 words of visible text is empty (title,
//     scripts, styles, noscript and markup do not count), unless it is the
//     shell of a JavaScript application, which draws the content: it loads
//     a script from its own site (a relative URL) or carries its data
//     inline (a script of type application/json). Such a shell is active.
//     Ten words is less than a real home page says about itself, and more
//     than the "Welcome!", "OK" or "Nothing to see here" of a server left
//     blank.
//  7. Anything else is active.
//
// A word is a run of text holding a letter or a digit; each Chinese or
// Japanese character counts as one, those scripts putting no spaces between
// words. Text is decoded by the charset the Content-Type or the markup
// declares.
//
// The families of rules 2 to 4 are tables of signals (signals.go): phrases
// of the text, hosts and paths the page loads from or redirects to, markers
// in its inline scripts, an attribute. Words that real sites use too
// ("coming soon", "It works!") count only on a short page, of fewer than 80
// words. A body that is not HTML is read as text when it is text/plain; any
// other type (JSON, an image) is active when it has a body and empty when
// it has none.
//
// Probe adds what only the fetch knows. A site that gives no answer over
// either scheme is unreachable; one the SSRF guard refuses (a private or
// loopback address) is blocked, as is a domain that is not a host name. A
// home page that redirects to another registrable domain is parked when it
// lands on a parking or marketplace host, judged as above when it lands on
// a parked, default or empty page, and otherwise redirect_off_site: the
// domain forwards its visitors to a live site elsewhere, so it is in use,
// and counts as active.
package siteprobe

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// Thresholds of the rules, in words of visible text: below emptyWords a
// page is empty (rule 6); below shortPage it is short, where weak signals
// and client-side redirects count.
const (
	emptyWords = 10
	shortPage  = 80
)

// Reason says why a site is or is not active.
type Reason string

// Reasons of a Verdict or a Result. Only ReasonActive and
// ReasonRedirectOffSite are active.
const (
	ReasonActive           Reason = "active"
	ReasonRedirectOffSite  Reason = "redirect_off_site"
	ReasonParked           Reason = "parked"
	ReasonRegistrarDefault Reason = "registrar_default"
	ReasonServerDefault    Reason = "server_default"
	ReasonClientRedirect   Reason = "client_redirect"
	ReasonEmpty            Reason = "empty"
	ReasonNotOK            Reason = "not_ok"
	ReasonUnreachable      Reason = "unreachable"
	ReasonBlocked          Reason = "blocked"
)

// Active reports whether r is a site in use: ReasonActive or
// ReasonRedirectOffSite.
func (r Reason) Active() bool { return r == ReasonActive || r == ReasonRedirectOffSite }

// Verdict is what Classify makes of an answer; its Reason says whether the
// site is active (Reason.Active).
type Verdict struct {
	Reason Reason `json:"reason"`
	// Signal names what decided, for people: the signal found ("sedoparking.com",
	// "coming soon"), the status, or the count of words.
	Signal string `json:"signal,omitempty"`
	// Redirect is where a client_redirect page sends the browser, as the
	// page writes it (often relative).
	Redirect string `json:"redirect,omitempty"`
}

// Classify judges a home page from its status, headers and body by the
// rules of the package documentation. It does no I/O.
func Classify(status int, header http.Header, body []byte) Verdict {
	if status < 200 || status > 299 {
		return Verdict{Reason: ReasonNotOK, Signal: fmt.Sprintf("status %d", status)}
	}
	contentType := header.Get("Content-Type")
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mediaType, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	var p *page
	switch mediaType {
	case "text/html", "application/xhtml+xml":
		p = readPage(body, contentType, true)
	case "text/plain":
		p = readPage(body, contentType, false)
	default:
		if len(bytes.TrimSpace(body)) == 0 {
			return Verdict{Reason: ReasonEmpty, Signal: "empty " + mediaType + " body"}
		}
		return Verdict{Reason: ReasonActive, Signal: mediaType + " body"}
	}
	return judge(p)
}

// judge applies rules 2 to 7 to a page.
func judge(p *page) Verdict {
	for _, f := range families {
		if s, ok := p.match(f.signals); ok {
			return Verdict{Reason: f.reason, Signal: s.needle}
		}
	}
	switch {
	case p.listing && p.entries == 0:
		return Verdict{Reason: ReasonServerDefault, Signal: "empty directory listing"}
	case p.listing:
		return Verdict{Reason: ReasonActive, Signal: fmt.Sprintf("directory listing of %d entries", p.entries)}
	case p.redirect != "" && p.words < shortPage:
		return Verdict{Reason: ReasonClientRedirect, Signal: fmt.Sprintf("%d words", p.words), Redirect: p.redirect}
	case p.words < emptyWords && p.ownScript != "":
		return Verdict{Reason: ReasonActive, Signal: "script " + p.ownScript}
	case p.words < emptyWords && p.appData:
		return Verdict{Reason: ReasonActive, Signal: "inline application data"}
	case p.words < emptyWords:
		return Verdict{Reason: ReasonEmpty, Signal: fmt.Sprintf("%d words", p.words)}
	}
	return Verdict{Reason: ReasonActive, Signal: fmt.Sprintf("%d words", p.words)}
}

// match returns the first of signals that p shows.
func (p *page) match(signals []signal) (signal, bool) {
	for _, s := range signals {
		if s.short && p.words >= shortPage {
			continue
		}
		if p.shows(s) {
			return s, true
		}
	}
	return signal{}, false
}

func (p *page) shows(s signal) bool {
	switch s.in {
	case inText:
		return contains(p.title, s.needle) || contains(p.text, s.needle)
	case inURL:
		return anyContains(p.urls, s.needle)
	case inRedirect:
		return anyContains(p.redirects, s.needle)
	case inScript:
		return contains(p.scripts, s.needle)
	case inAttribute:
		return p.attrs[s.needle]
	}
	return false
}

func anyContains(list []string, needle string) bool {
	for _, s := range list {
		if contains(s, needle) {
			return true
		}
	}
	return false
}

// contains reports whether needle occurs in s on word boundaries: where
// the needle begins or ends with a letter or a digit, the byte beyond it
// is not a letter, a digit or a hyphen (nor a dot before a letter or digit,
// so that "dan.com" is not found in "dan.com.au").
func contains(s, needle string) bool {
	for from := 0; ; {
		i := strings.Index(s[from:], needle)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(needle)
		if boundaryBefore(s, start, needle[0]) && boundaryAfter(s, end, needle[len(needle)-1]) {
			return true
		}
		from = start + 1
	}
}

func boundaryBefore(s string, start int, first byte) bool {
	return !isWordByte(first) || start == 0 || !isWordByte(s[start-1]) && s[start-1] != '-'
}

func boundaryAfter(s string, end int, last byte) bool {
	if !isWordByte(last) || end == len(s) {
		return true
	}
	next := s[end]
	if next == '.' {
		return end+1 == len(s) || !isWordByte(s[end+1])
	}
	return !isWordByte(next) && next != '-'
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= 0x80
}
