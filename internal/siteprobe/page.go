package siteprobe

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"

	"github.com/domaind/domaind/internal/htmlwalk"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// page is what Classify reads of a body.
type page struct {
	title     string          // the first <title>, lower case, spaces collapsed
	text      string          // visible text, lower case, spaces collapsed
	words     int             // words of text (see countWords)
	urls      []string        // lower case: what the page loads and where it redirects to
	redirects []string        // lower case: where the page sends the browser
	redirect  string          // the first of them as written
	scripts   string          // inline script source, lower case
	attrs     map[string]bool // names of the attributes on any element
	ownScript string          // the first script loaded by a relative URL
	appData   bool            // an inline application/json script: an app's state
	listing   bool            // a directory listing ("Index of /...")
	entries   int             // links, but for a listing's parent, sort and cgi-bin/ ones: its entries
}

// scriptRedirect finds a script sending the browser to a literal URL:
// location = "...", location.href = '...', location.replace("...").
var scriptRedirect = regexp.MustCompile(`location(?:\.href)?\s*=\s*["']([^"']+)["']|location\.(?:replace|assign)\(\s*["']([^"']+)["']`)

// readPage decodes body (by the charset its Content-Type or its markup
// declares) and reads it as HTML, or as plain text when asHTML is false.
func readPage(body []byte, contentType string, asHTML bool) *page {
	if enc, _, _ := charset.DetermineEncoding(body, contentType); enc != nil {
		if decoded, err := enc.NewDecoder().Bytes(body); err == nil {
			body = decoded
		}
	}
	p := &page{attrs: map[string]bool{}}
	if !asHTML {
		p.setText(string(body))
		return p
	}
	var (
		text, scripts strings.Builder
		code          bool // the <script> whose content comes next is inline JavaScript
		hasTitle      bool
	)
	htmlwalk.Walk(body, htmlwalk.Visitor{
		Raw: func(tag atom.Atom, raw []byte) {
			switch {
			case tag == atom.Title && !hasTitle:
				p.title, hasTitle = htmlwalk.Collapse(strings.ToLower(string(raw))), true
			case tag == atom.Script && code:
				src := string(raw)
				scripts.WriteString(src)
				scripts.WriteByte('\n')
				if m := scriptRedirect.FindStringSubmatch(src); m != nil {
					p.addRedirect(m[1] + m[2])
				}
			}
		},
		Text: func(raw []byte) {
			text.Write(raw)
			text.WriteByte(' ')
		},
		Tag: func(z *html.Tokenizer, tag atom.Atom) {
			code = false
			a := htmlwalk.Attrs(z)
			for k := range a {
				p.attrs[k] = true
			}
			switch tag {
			case atom.Script:
				src, hasSrc := a["src"]
				switch {
				case hasSrc:
					p.addURL(src)
					if p.ownScript == "" && isRelative(src) {
						p.ownScript = src
					}
				case isJavaScript(a["type"]):
					code = true
				case strings.EqualFold(a["type"], "application/json"):
					p.appData = true
				}
			case atom.Iframe, atom.Frame, atom.Img, atom.Embed, atom.Source:
				p.addURL(a["src"])
			case atom.Link:
				p.addURL(a["href"])
			case atom.Form:
				p.addURL(a["action"])
			case atom.Object:
				p.addURL(a["data"])
			case atom.Meta:
				if strings.EqualFold(a["http-equiv"], "refresh") {
					p.addRedirect(refreshTarget(a["content"]))
				}
			case atom.A:
				if href, ok := a["href"]; ok && !scaffolding(href) {
					p.entries++
				}
			}
		},
	})
	p.setText(text.String())
	p.scripts = strings.ToLower(scripts.String())
	p.listing = strings.HasPrefix(p.title, "index of /")
	return p
}

func (p *page) addURL(u string) {
	if u != "" {
		p.urls = append(p.urls, strings.ToLower(u))
	}
}

func (p *page) addRedirect(u string) {
	if u == "" {
		return
	}
	p.addURL(u)
	p.redirects = append(p.redirects, strings.ToLower(u))
	if p.redirect == "" {
		p.redirect = u
	}
}

func (p *page) setText(s string) {
	p.text = htmlwalk.Collapse(strings.ToLower(s))
	p.words = countWords(p.text)
}

// refreshTarget returns the URL of a meta refresh's content ("0;
// URL='/next'"), or "" when it only reloads the page.
func refreshTarget(content string) string {
	_, after, ok := strings.Cut(content, ";")
	if !ok {
		_, after, ok = strings.Cut(content, ",")
	}
	after = strings.TrimSpace(after)
	if !ok || after == "" {
		return ""
	}
	// "URL = target", or the target alone (both are the HTML standard's).
	if len(after) >= 3 && strings.EqualFold(after[:3], "url") {
		if rest := strings.TrimSpace(after[3:]); strings.HasPrefix(rest, "=") {
			after = strings.TrimSpace(rest[1:])
		}
	}
	return strings.Trim(after, `"'`)
}

// isJavaScript reports whether a <script type> is code: no type, or a
// JavaScript one (data blocks and templates are not).
func isJavaScript(typ string) bool {
	t := strings.ToLower(typ)
	return t == "" || t == "module" || strings.Contains(t, "javascript") || strings.Contains(t, "ecmascript")
}

// isRelative reports whether a script's src names a path on the page's
// own site (not an absolute or scheme-relative URL, not a data: URL).
func isRelative(src string) bool {
	u, err := url.Parse(src)
	return err == nil && src != "" && u.Scheme == "" && u.Host == "" && !strings.HasPrefix(src, "//")
}

// scaffolding reports whether a link is part of a directory listing's
// furniture rather than an entry: the parent directory, a sort order, a
// fragment, or the cgi-bin/ every hosting account has.
func scaffolding(href string) bool {
	h := strings.Trim(strings.ToLower(href), "/")
	return h == "" || h == ".." || strings.HasPrefix(href, "?") || strings.HasPrefix(href, "#") ||
		strings.HasPrefix(href, "../") || h == "cgi-bin" || h == ".well-known"
}

// countWords counts the words of s: runs of text holding a letter or a
// digit, with each Chinese or Japanese character counted as a word (those
// scripts put no spaces between words).
func countWords(s string) int {
	n := 0
	for _, f := range strings.Fields(s) {
		word := false
		for _, r := range f {
			switch {
			case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
				n++
			case unicode.IsLetter(r) || unicode.IsDigit(r):
				word = true
			}
		}
		if word {
			n++
		}
	}
	return n
}
