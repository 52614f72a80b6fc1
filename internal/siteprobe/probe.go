package siteprobe

import (
	"context"
	"errors"
	"strings"

	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fetch"
)

// maxClientRedirects is how many client-side redirects (meta refresh,
// script) Probe follows from the home page.
const maxClientRedirects = 2

// Result is what Probe found of a domain's home page.
type Result struct {
	Domain string `json:"domain"`
	Verdict
	// URL is the page the verdict is about, after redirects; when no page
	// answered, the last URL tried.
	URL string `json:"url"`
	// Status is that page's HTTP status; 0 when none answered.
	Status int `json:"status,omitempty"`
	// Err says why no page answered (unreachable) or why the probe refused
	// (blocked). Blocked messages may be shown to whoever gave the domain;
	// others are for logs.
	Err string `json:"error,omitempty"`
}

// Probe fetches the home page of domain through c, https first and http
// when https fails, and judges it (see the package documentation). Every
// request goes through c's SSRF guard, and reads at most c's cap of a
// body; Probe makes six requests at most (a home page and two client-side
// redirects per scheme), each bounded by c's timeout, all by ctx.
func Probe(ctx context.Context, c *fetch.Client, domain string) Result {
	host, err := domainname.ParseHost(domain)
	if err != nil {
		return Result{Domain: domain, Verdict: Verdict{Reason: ReasonBlocked}, Err: err.Error()}
	}
	return probe(ctx, c, host, []string{"https://" + host + "/", "http://" + host + "/"})
}

// probe tries homes in order and returns the first answer that is neither
// unreachable nor an error status; failing that, an error status beats no
// answer, and the first of two error statuses wins.
func probe(ctx context.Context, c *fetch.Client, domain string, homes []string) Result {
	var best Result
	var failures []string
	for i, home := range homes {
		r := fetchPage(ctx, c, domain, home)
		if r.Reason != ReasonUnreachable && r.Reason != ReasonNotOK {
			return r
		}
		if r.Reason == ReasonUnreachable {
			failures = append(failures, home+": "+r.Err)
		}
		if i == 0 || best.Reason == ReasonUnreachable {
			best = r
		}
		if ctx.Err() != nil {
			break
		}
	}
	if best.Reason == ReasonUnreachable {
		best.Err = strings.Join(failures, "; ")
	}
	return best
}

// fetchPage gets home, follows the client-side redirects of what comes
// back, and judges the page it ends on. A redirect whose target gives no
// answer leaves the page that made it as the verdict (client_redirect);
// one the guard refuses is blocked.
func fetchPage(ctx context.Context, c *fetch.Client, domain, home string) Result {
	target := home
	var r Result
	for hop := 0; ; hop++ {
		// A body that breaks off midway still came from a live server: the
		// part read is judged.
		res, body, _, err := c.Get(ctx, target)
		if res == nil {
			_, blocked := errors.AsType[*fetch.BlockedError](err)
			switch {
			case blocked:
				return Result{Domain: domain, Verdict: Verdict{Reason: ReasonBlocked}, URL: target, Err: err.Error()}
			case hop > 0:
				r.Err = "following the page's redirect: " + err.Error()
				return r
			}
			return Result{Domain: domain, Verdict: Verdict{Reason: ReasonUnreachable}, URL: target, Err: err.Error()}
		}
		final := res.Request.URL
		r = Result{Domain: domain, Verdict: Classify(res.StatusCode, res.Header, body), URL: final.String(), Status: res.StatusCode}
		if offSite(domain, final.Hostname()) {
			if s, ok := parkingHost(final.Hostname()); ok {
				r.Verdict = Verdict{Reason: ReasonParked, Signal: s.needle}
			} else if r.Reason.Active() {
				r.Reason = ReasonRedirectOffSite
			}
		}
		if r.Reason != ReasonClientRedirect || hop == maxClientRedirects {
			return r
		}
		next, err := final.Parse(r.Redirect)
		if err != nil {
			return r
		}
		target = next.String()
	}
}

// offSite reports whether host is on another registrable domain than
// domain ("www.example.com" and "shop.example.com" are on example.com's).
func offSite(domain, host string) bool {
	return registrable(domain) != registrable(strings.ToLower(host))
}

func registrable(host string) string {
	if n, err := domainname.Parse(host); err == nil {
		return n.Registrable
	}
	return host
}

// parkingHost returns the parking signal that names host's site, for a
// redirect that lands on a parking service or a marketplace.
func parkingHost(host string) (signal, bool) {
	for _, s := range parkingSignals {
		if s.in == inURL && contains(strings.ToLower(host), s.needle) {
			return s, true
		}
	}
	return signal{}, false
}
