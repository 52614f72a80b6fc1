package htmlwalk

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Visible text, raw-text content and tags come apart; a template's text
// is not visible, and attributes are read once each, trimmed.
func TestWalk(t *testing.T) {
	doc := `<title> A page </title><p>Hello <b>there</b></p><script>var x = "<p>no</p>";</script>
		<template><p>hidden</p></template><a href=" /next " href="/second">on</a><style>p{}</style>`
	var text, raw, tags []string
	var href string
	Walk([]byte(doc), Visitor{
		Text: func(b []byte) {
			if s := strings.TrimSpace(string(b)); s != "" {
				text = append(text, s)
			}
		},
		Raw: func(tag atom.Atom, b []byte) { raw = append(raw, tag.String()+":"+string(b)) },
		Tag: func(z *html.Tokenizer, tag atom.Atom) {
			tags = append(tags, tag.String())
			if tag == atom.A {
				href = Attrs(z)["href"]
			}
		},
	})
	if got := strings.Join(text, "|"); got != "Hello|there|on" {
		t.Errorf("visible text %q, want Hello|there|on", got)
	}
	if got := strings.Join(raw, "|"); got != `title: A page |script:var x = "<p>no</p>";|style:p{}` {
		t.Errorf("raw text %q", got)
	}
	if got := strings.Join(tags, " "); got != "title p b script template p a style" {
		t.Errorf("tags %q", got)
	}
	if href != "/next" {
		t.Errorf("href %q, want the first, trimmed", href)
	}
}
