// Package page is the one layout of every page a person sees: the public
// pages (home, marketplace, sign-in, account, checkout, consent) and the
// ops and finance console alike. It holds the templates, the stylesheet
// and the icon, writes a page with the headers every page carries, and
// has the helpers pages share (amounts, times, the error page, paging).
package page

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/requestid"
)

// files are the templates, the stylesheet and the icon.
//
//go:embed files/*.html files/site.css files/favicon.svg files/search.js
var files embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{"head": newHead, "filter": newFilter}).ParseFS(files, "files/*.html"))

// Policy is the Content-Security-Policy of the pages: nothing but our own
// stylesheet loads, no script runs, forms post here, and no site may frame
// them (clickjacking).
const Policy = "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// Time is how the pages write a time, which must be in UTC.
const Time = "2006-01-02 15:04 UTC"

// Render writes the page template name with data and status. formAction
// is an origin besides this site that the page's form may lead to (the
// consent form ends at the client's redirect URI), or "". Pages carry
// forms with CSRF tokens, so they are never cached.
func Render(w http.ResponseWriter, status int, name string, data any, formAction string) error {
	csp := Policy
	if formAction != "" {
		csp += " " + formAction
	}
	return render(w, status, name, data, csp)
}

// ScriptPolicy is Policy for a page that runs this site's script files
// (the search page's), which may call this site's API and nothing else.
const ScriptPolicy = Policy + "; script-src 'self'; connect-src 'self'"

// RenderScripted is Render for a page that runs this site's script files,
// under ScriptPolicy.
func RenderScripted(w http.ResponseWriter, status int, name string, data any) error {
	return render(w, status, name, data, ScriptPolicy)
}

func render(w http.ResponseWriter, status int, name string, data any, csp string) error {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY") // for browsers without frame-ancestors
	w.WriteHeader(status)
	return templates.ExecuteTemplate(w, name, data)
}

// Link is an entry of the header.
type Link struct {
	Href, Text string
	// Current marks the page the person is on.
	Current bool
}

// Head is what the layout's header shows: the page's title, and the links
// of the part of the site it belongs to, the current one marked.
type Head struct {
	Title string
	// Label names the links for screen readers.
	Label string
	Links []Link
}

// siteLinks are the header of the public pages; opsLinks of the console.
var (
	siteLinks = []Link{{Href: "/", Text: "Home"}, {Href: "/market", Text: "Marketplace"}, {Href: "/docs", Text: "API docs"}, {Href: "/account", Text: "Account"}}
	opsLinks  = []Link{{Href: "/ops", Text: "Operations"}, {Href: "/ops/partners", Text: "Partners"}, {Href: "/ops/listings", Text: "Listings"}, {Href: "/ops/orders", Text: "Orders"}, {Href: "/ops/webhooks", Text: "Webhooks"},
		{Href: "/ops/brokerage", Text: "Brokerage"}, {Href: "/ops/payments", Text: "Payments"}, {Href: "/ops/finance", Text: "Finance"}, {Href: "/ops/settlements", Text: "Settlement runs"},
		{Href: "/ops/payouts", Text: "Payouts"}}
)

// newHead is the header of the page at here (its path): the console's
// links under /ops, none on "" (pages a partner's buyer sees: checkout,
// consent, a case's progress), the site's links elsewhere. It is the
// templates' head function: {{template "top" (head .Title "/ops/orders")}}.
func newHead(title, here string) Head {
	h := Head{Title: title}
	var links []Link
	switch {
	case here == "":
		return h
	case here == "/ops" || strings.HasPrefix(here, "/ops/"):
		h.Label, links = "Operations", opsLinks
	default:
		h.Label, links = "Site", siteLinks
	}
	for _, l := range links {
		l.Current = l.Href == here
		h.Links = append(h.Links, l)
	}
	return h
}

// Filter is a list page's filter of one field: a select of its values,
// "any" first (the layout's "filter" template).
type Filter struct {
	Label, Name string
	Values      []string
	// Current is the value asked for ("" for any).
	Current string
}

// newFilter is the templates' filter function:
// {{template "filter" (filter "Status" "status" .Statuses .Status)}}.
func newFilter(label, name string, values []string, current string) Filter {
	return Filter{Label: label, Name: name, Values: values, Current: current}
}

// CookieName is the name the browser keeps the service's cookie name
// under. Served over https (secure) it carries the __Host- prefix: the
// browser then takes the cookie only from this host, Secure, for the
// whole site, so a sibling subdomain can neither set nor shadow it
// (cookie tossing), which would defeat a double-submit CSRF token, fix a
// session or plant a notice.
func CookieName(name string, secure bool) string {
	if secure {
		return "__Host-" + name
	}
	return name
}

// Money writes cents of currency as the pages show an amount, with
// thousands grouped: "1,234.56 USD", "-0.50 USD" (a refund).
func Money(currency string, cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	whole := strconv.FormatInt(cents/100, 10)
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	return fmt.Sprintf("%s%s.%02d %s", sign, whole, cents%100, currency)
}

// Took writes how long something took, to the millisecond: "" for none
// (a delivery that has not arrived).
func Took(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.Round(time.Millisecond).String()
}

// Older is the link of a list page's next (older) page: path with the
// cursor next and those of keys that query holds; "" when there is none.
func Older(query url.Values, path, next string, keys ...string) string {
	if next == "" {
		return ""
	}
	q := url.Values{"cursor": {next}}
	for _, k := range keys {
		if v := query.Get(k); v != "" {
			q.Set(k, v)
		}
	}
	return path + "?" + q.Encode()
}

// Wanted says r is a browser's asking for a page: a GET or HEAD outside
// /api whose Accept names text/html before application/json (or without
// it). Anything else gets the API's JSON.
func Wanted(r *http.Request) bool {
	if m := r.Method; (m != http.MethodGet && m != http.MethodHead) || strings.HasPrefix(r.URL.Path, "/api/") {
		return false
	}
	accept := r.Header.Get("Accept")
	html, json := strings.Index(accept, "text/html"), strings.Index(accept, "application/json")
	return html >= 0 && (json < 0 || html < json)
}

// Error is what the error page (error.html) shows.
type Error struct {
	Title, Problem, RequestID string
	Status                    int
	// Path is the page asked for, for the header (the console's under /ops).
	Path string
}

// NewError is the error page of status for r, saying problem.
func NewError(r *http.Request, status int, problem string) Error {
	return Error{Title: errorTitle(status), Problem: problem, Status: status, RequestID: requestid.From(r.Context()), Path: r.URL.Path}
}

// errorTitle is the heading of an error page of status.
func errorTitle(status int) string {
	switch {
	case status == http.StatusNotFound:
		return "Page not found"
	case status == http.StatusForbidden || status == http.StatusUnauthorized:
		return "Not allowed"
	case status == http.StatusTooManyRequests:
		return "Too many requests: wait a moment"
	case status >= 500:
		return "Something went wrong on our side"
	}
	return "This request cannot be answered"
}

// ServeCSS answers GET /assets/site.css, the pages' stylesheet.
func ServeCSS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=3600")
	http.ServeFileFS(w, r, files, "files/site.css")
}

// ServeScript answers GET /assets/search.js, the search page's script.
func ServeScript(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=3600")
	http.ServeFileFS(w, r, files, "files/search.js")
}

// ServeIcon answers GET /favicon.svg, and /favicon.ico, which browsers ask
// for on every site: the service's icon, an SVG either way.
func ServeIcon(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Header().Set("Content-Type", "image/svg+xml")
	f, _ := files.Open("files/favicon.svg") // embedded: always there
	defer f.Close()
	io.Copy(w, f)
}

// Problem is the status and words a page shows for err, from the table
// the API's JSON errors use; known is false for an error without a code
// (a fault of ours, which the caller logs: the words are generic).
func Problem(err error) (status int, words string, known bool) {
	e, known := httpjson.Coded(err)
	return httpjson.Status(e.Code), e.Message, known
}
