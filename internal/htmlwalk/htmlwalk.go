// Package htmlwalk reads an HTML document's tokens as a browser shows
// them: the visible text apart from the text of raw-text elements
// (title, script, style, noscript, textarea and their kin), and no visible
// text from inside <template>, which is never rendered as it stands.
package htmlwalk

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Visitor is what Walk calls; nil fields are skipped.
type Visitor struct {
	// Tag is called for each start or self-closing tag, with the
	// tokenizer at the tag (z.TagAttr reads its attributes).
	Tag func(z *html.Tokenizer, tag atom.Atom)
	// Text is called with each run of visible text.
	Text func(text []byte)
	// Raw is called with the content of a raw-text element tag.
	Raw func(tag atom.Atom, text []byte)
}

// Walk reads body to its end, calling v.
func Walk(body []byte, v Visitor) {
	var (
		raw       atom.Atom // the raw-text element whose content comes next
		templates int
	)
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return
		case html.TextToken:
			switch {
			case raw != 0 && v.Raw != nil:
				v.Raw(raw, z.Text())
			case raw == 0 && templates == 0 && v.Text != nil:
				v.Text(z.Text())
			}
			raw = 0
		case html.EndTagToken:
			raw = 0
			if name, _ := z.TagName(); atom.Lookup(name) == atom.Template && templates > 0 {
				templates--
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			raw = 0
			name, _ := z.TagName()
			tag := atom.Lookup(name)
			switch tag {
			case atom.Title, atom.Script, atom.Style, atom.Noscript, atom.Textarea,
				atom.Iframe, atom.Noembed, atom.Noframes, atom.Xmp, atom.Plaintext:
				raw = tag
			case atom.Template:
				if tt == html.StartTagToken {
					templates++
				}
			}
			if v.Tag != nil {
				v.Tag(z, tag)
			}
		}
	}
}

// Attrs returns the attributes of the tag z is at, the first of each
// name, values trimmed of spaces.
func Attrs(z *html.Tokenizer) map[string]string {
	m := map[string]string{}
	for {
		k, v, more := z.TagAttr()
		if len(k) > 0 {
			if _, dup := m[string(k)]; !dup {
				m[string(k)] = string(bytes.TrimSpace(v))
			}
		}
		if !more {
			return m
		}
	}
}

// Collapse trims s and turns each run of white space into one space, as a
// browser shows text.
func Collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
