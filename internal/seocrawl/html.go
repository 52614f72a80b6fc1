package seocrawl

import (
	"bytes"
	"hash/fnv"
	"mime"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// document is what the crawler keeps of an HTML page.
type document struct {
	title       string
	description string
	canonical   string // absolute and normalized; "" when the page names none
	h1          int
	words       int    // words of visible text (not in head, script, style, template...)
	text        uint64 // hash of those words, to spot pages with the same content
	links       []*url.URL
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
		raw                        string // the raw-text element whose content comes next
		templates                  int
		hash                       = fnv.New64a()
	)
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			d.text = hash.Sum64()
			d.canonical, d.links = resolveLinks(page, base, hasBase, canonical, hrefs)
			return &d
		case html.TextToken:
			switch {
			case raw == "title" && !hasTitle:
				d.title, hasTitle = collapse(string(z.Text())), true
			case raw == "" && templates == 0:
				for _, w := range strings.Fields(string(z.Text())) {
					d.words++
					hash.Write([]byte(w))
					hash.Write([]byte{' '})
				}
			}
			raw = ""
		case html.EndTagToken:
			raw = ""
			if name, _ := z.TagName(); atom.Lookup(name) == atom.Template && templates > 0 {
				templates--
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			raw = ""
			name, _ := z.TagName()
			tag := atom.Lookup(name)
			switch tag {
			case atom.Title, atom.Script, atom.Style, atom.Noscript, atom.Textarea,
				atom.Iframe, atom.Noembed, atom.Noframes, atom.Xmp, atom.Plaintext:
				raw = tag.String()
			case atom.Template:
				if tt == html.StartTagToken {
					templates++
				}
			case atom.H1:
				d.h1++
			case atom.Base:
				if v, ok := attr(z, "href"); ok && !hasBase {
					base, hasBase = v, true
				}
			case atom.Meta:
				a := attrs(z)
				if strings.EqualFold(a["name"], "description") && !hasDesc {
					d.description, hasDesc = collapse(a["content"]), true
				}
			case atom.Link:
				a := attrs(z)
				if hasToken(a["rel"], "canonical") && canonical == "" {
					canonical = a["href"]
				}
			case atom.A, atom.Area:
				if v, ok := attr(z, "href"); ok {
					hrefs = append(hrefs, v)
				}
			}
		}
	}
}

// resolveLinks turns the hrefs found on page into distinct absolute URLs.
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

// attrs returns the tag's attributes (the first of each name); call it
// instead of attr, once per tag.
func attrs(z *html.Tokenizer) map[string]string {
	m := map[string]string{}
	for {
		k, v, more := z.TagAttr()
		if _, dup := m[string(k)]; !dup && len(k) > 0 {
			m[string(k)] = string(v)
		}
		if !more {
			return m
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

// collapse trims s and turns each run of white space into one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
