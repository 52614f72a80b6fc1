package seocrawl

import (
	"hash/fnv"
	"mime"
	"net/url"
	"strings"

	"github.com/domaind/domaind/internal/htmlwalk"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// document is what the crawler keeps of an HTML page.
type document struct {
	title       string
	description string
	canonical   string // absolute and normalized; "" when the page names none
	h1          int
	words       int        // words of visible text (not in head, script, style, template...)
	text        uint64     // hash of those words, to spot pages with the same content
	links       []*url.URL // the first MaxLinksPerPage distinct ones
}

// isHTML reports whether a Content-Type is an HTML document.
func isHTML(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}

// parseDocument reads an HTML page fetched from page. Links are the
// distinct http(s) targets of <a href> and <area href> in document order,
// resolved against <base href> when there is one (the first wins, as in
// browsers), the page itself left out. The first <title>, <meta
// name=description> and <link rel=canonical> count.
func parseDocument(body []byte, page *url.URL) *document {
	var (
		d                          document
		base, canonical            string
		hasBase, hasTitle, hasDesc bool
		hrefs                      []string
		hash                       = fnv.New64a()
	)
	htmlwalk.Walk(body, htmlwalk.Visitor{
		Raw: func(tag atom.Atom, text []byte) {
			if tag == atom.Title && !hasTitle {
				d.title, hasTitle = htmlwalk.Collapse(string(text)), true
			}
		},
		Text: func(text []byte) {
			for _, w := range strings.Fields(string(text)) {
				d.words++
				hash.Write([]byte(w))
				hash.Write([]byte{' '})
			}
		},
		Tag: func(z *html.Tokenizer, tag atom.Atom) {
			switch tag {
			case atom.H1:
				d.h1++
			case atom.Base:
				if v, ok := attr(z, "href"); ok && !hasBase {
					base, hasBase = v, true
				}
			case atom.Meta:
				a := htmlwalk.Attrs(z)
				if strings.EqualFold(a["name"], "description") && !hasDesc {
					d.description, hasDesc = htmlwalk.Collapse(a["content"]), true
				}
			case atom.Link:
				if a := htmlwalk.Attrs(z); hasToken(a["rel"], "canonical") && canonical == "" {
					canonical = a["href"]
				}
			case atom.A, atom.Area:
				if v, ok := attr(z, "href"); ok {
					hrefs = append(hrefs, v)
				}
			}
		},
	})
	d.text = hash.Sum64()
	d.canonical, d.links = resolveLinks(page, base, hasBase, canonical, hrefs)
	return &d
}

// resolveLinks turns the hrefs found on page into distinct absolute URLs,
// the first MaxLinksPerPage of them.
func resolveLinks(page *url.URL, baseHref string, hasBase bool, canonicalHref string, hrefs []string) (string, []*url.URL) {
	base := page
	if hasBase {
		if b, ok := resolve(page, baseHref); ok {
			base = b
		}
	}
	var canonical string
	if canonicalHref != "" {
		if u, ok := resolve(base, canonicalHref); ok {
			canonical = u.String()
		}
	}
	seen := map[string]bool{page.String(): true}
	var links []*url.URL
	for _, h := range hrefs {
		if len(links) == MaxLinksPerPage {
			break
		}
		u, ok := resolve(base, h)
		if !ok || seen[u.String()] {
			continue
		}
		seen[u.String()] = true
		links = append(links, u)
	}
	return canonical, links
}

// attr returns the value of the tag attribute key; call it once per tag.
func attr(z *html.Tokenizer, key string) (string, bool) {
	for {
		k, v, more := z.TagAttr()
		if string(k) == key {
			return string(v), true
		}
		if !more {
			return "", false
		}
	}
}

// hasToken reports whether the space-separated list v holds token,
// compared case-insensitively (as rel values are).
func hasToken(v, token string) bool {
	for _, f := range strings.Fields(v) {
		if strings.EqualFold(f, token) {
			return true
		}
	}
	return false
}
