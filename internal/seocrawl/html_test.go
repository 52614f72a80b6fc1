package seocrawl

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestParseDocument(t *testing.T) {
	page, _ := url.Parse("http://example.com/dir/page")
	tests := []struct {
		name string
		html string
		want document // text is not compared
		urls []string // want.links as strings
	}{
		{
			name: "head fields, headings and visible words",
			html: `<!doctype html><html><head>
				<title>  My
				  Page &amp; more </title>
				<meta name="Description" content=" About   this page ">
				<meta name="description" content="second one is ignored">
				<link rel="stylesheet canonical" href="/canonical#top">
				<style>body { color: red }</style>
				<script>var words = "not counted";</script>
				</head><body>
				<h1>Main heading</h1><h1>Another</h1><h2>Sub</h2>
				<p>One two, three.</p>
				<noscript>enable scripts please</noscript>
				<template><p>hidden template words</p></template>
				<svg><title>icon</title></svg>
				</body></html>`,
			want: document{
				title: "My Page & more", description: "About this page",
				canonical: "http://example.com/canonical", h1: 2, words: 7,
			},
		},
		{
			name: "links are resolved, normalized, distinct, http(s) only, page left out",
			html: `<a href="other">1</a> <a href="/dir/other#x">2</a> <a href="HTTP://Example.COM:80/up">3</a>
				<a href="https://ext.example:443/p?q=1">4</a> <a href="mailto:me@example.com">5</a>
				<a href="javascript:void(0)">6</a> <a href="#top">7</a> <a href="page">8</a>
				<area href="../map"> <a name="anchor">9</a> <a href="ftp://example.com/f">10</a>`,
			want: document{words: 10},
			urls: []string{"http://example.com/dir/other", "http://example.com/up", "https://ext.example/p?q=1", "http://example.com/map"},
		},
		{
			name: "base href applies to every link, even earlier ones",
			html: `<a href="a">a</a><base href="https://cdn.example.com/root/"><base href="/ignored/"><link rel=canonical href="c"><a href="b">b</a>`,
			want: document{canonical: "https://cdn.example.com/root/c", words: 2},
			urls: []string{"https://cdn.example.com/root/a", "https://cdn.example.com/root/b"},
		},
		{
			name: "nothing at all",
			html: ``,
			want: document{},
		},
		{
			name: "nested past the tree parser's limit still parses",
			html: strings.Repeat("<div>", 2000) + "<title>Deep</title><h1>deep words</h1>",
			want: document{title: "Deep", h1: 1, words: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseDocument([]byte(tt.html), page)
			var gotURLs []string
			for _, l := range got.links {
				gotURLs = append(gotURLs, l.String())
			}
			if !reflect.DeepEqual(gotURLs, tt.urls) {
				t.Errorf("links = %q, want %q", gotURLs, tt.urls)
			}
			got.links, got.text = nil, 0
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("document = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestParseDocumentHashesVisibleText(t *testing.T) {
	a := parseDocument([]byte("<title>A</title><p>same   words</p><script>x</script>"), &url.URL{Scheme: "http", Host: "h", Path: "/"})
	b := parseDocument([]byte("<title>B</title><div>same</div>\n<b>words</b><script>y</script>"), &url.URL{Scheme: "http", Host: "h", Path: "/"})
	c := parseDocument([]byte("<p>other words</p>"), &url.URL{Scheme: "http", Host: "h", Path: "/"})
	if a.text != b.text {
		t.Error("same visible words hash differently")
	}
	if a.text == c.text {
		t.Error("different visible words hash the same")
	}
}

func TestIsHTML(t *testing.T) {
	tests := map[string]bool{
		"text/html":                       true,
		"TEXT/HTML; charset=UTF-8":        true,
		"application/xhtml+xml":           true,
		"text/plain":                      false,
		"application/json; charset=utf-8": false,
		"":                                false,
		"text/html;;;":                    false,
	}
	for ct, want := range tests {
		if got := isHTML(ct); got != want {
			t.Errorf("isHTML(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := map[string]string{
		"HTTP://Example.COM":            "http://example.com/",
		"http://example.com:80/a#frag":  "http://example.com/a",
		"https://example.com:443/?":     "https://example.com/",
		"https://example.com:8443/a?b":  "https://example.com:8443/a?b",
		"http://example.com:443/":       "http://example.com:443/",
		"http://[::1]:80/x":             "http://[::1]/x",
		"http://example.com/a/../b/./c": "http://example.com/a/../b/./c",
	}
	for raw, want := range tests {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := normalize(u).String(); got != want {
			t.Errorf("normalize(%q) = %q, want %q", raw, got, want)
		}
	}
	base, _ := url.Parse("http://example.com/a/b")
	for href, want := range map[string]string{
		"../c/./d":            "http://example.com/c/d",
		"  /x  ":              "http://example.com/x",
		"//Other.example:80/": "http://other.example/",
	} {
		if got, ok := resolve(base, href); !ok || got.String() != want {
			t.Errorf("resolve(%q) = %v, %v; want %q", href, got, ok, want)
		}
	}
}

// FuzzParseDocument feeds hostile HTML to the page parser: it must not
// panic and must only return absolute http(s) links other than the page.
func FuzzParseDocument(f *testing.F) {
	f.Add(`<base href="//x"><a href="a">a</a><title>t</title><link rel=canonical href=c>`)
	f.Add(`<template><template></template><a href="http://[::1">`)
	f.Add(`<script>`)
	page, _ := url.Parse("http://example.com/p")
	f.Fuzz(func(t *testing.T, s string) {
		d := parseDocument([]byte(s), page)
		for _, l := range d.links {
			if !isWeb(l) || l.String() == page.String() {
				t.Fatalf("bad link %q", l)
			}
		}
	})
}
