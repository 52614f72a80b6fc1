package seocrawl

import (
	"net/url"
	"testing"
)

func TestRobotsRules(t *testing.T) {
	tests := []struct {
		name  string
		txt   string
		paths map[string]bool // path → allowed
	}{
		{
			name:  "no file content allows all",
			txt:   "",
			paths: map[string]bool{"/": true, "/a": true},
		},
		{
			name: "longest match wins",
			txt:  "User-agent: *\nDisallow: /shop\nAllow: /shop/public\nDisallow: /shop/public/drafts\n",
			paths: map[string]bool{
				"/shop": false, "/shop/cart": false, "/shop/public": true, "/shop/public/a": true,
				"/shop/public/drafts/1": false, "/shopping": false, "/about": true,
			},
		},
		{
			name:  "allow wins a tie",
			txt:   "User-agent: *\nDisallow: /page\nAllow: /page\n",
			paths: map[string]bool{"/page": true, "/page2": true},
		},
		{
			name:  "longer pattern beats order",
			txt:   "User-agent: *\nAllow: /p\nDisallow: /pa\n",
			paths: map[string]bool{"/p": true, "/pa": false, "/pb": true},
		},
		{
			name: "star and dollar wildcards",
			txt:  "User-agent: *\nDisallow: /*.pdf$\nDisallow: /a*b\nDisallow: /exact$\n",
			paths: map[string]bool{
				"/x.pdf": false, "/dir/y.pdf": false, "/x.pdf?dl=1": true, "/x.pdfx": true,
				"/ab": false, "/axxb": false, "/axxbzz": false, "/ac": true,
				"/exact": false, "/exact/": true, "/exactly": true,
			},
		},
		{
			name:  "dollar in the middle is a character",
			txt:   "User-agent: *\nDisallow: /a$b\n",
			paths: map[string]bool{"/a$b": false, "/a": true},
		},
		{
			name:  "query is part of the path",
			txt:   "User-agent: *\nDisallow: /*?sort=\n",
			paths: map[string]bool{"/list?sort=asc": false, "/list": true, "/list?page=2": true},
		},
		{
			name:  "own group beats star",
			txt:   "User-agent: *\nDisallow: /\n\nUser-agent: domaind\nDisallow: /private\n",
			paths: map[string]bool{"/": true, "/public": true, "/private": false},
		},
		{
			name:  "own group matched by product token, case-insensitively",
			txt:   "User-agent: DomainD/2.0\nDisallow: /x\n\nUser-agent: *\nDisallow: /\n",
			paths: map[string]bool{"/x": false, "/y": true},
		},
		{
			name:  "other agents' groups do not apply",
			txt:   "User-agent: googlebot\nDisallow: /\n\nUser-agent: domaindx\nDisallow: /\n",
			paths: map[string]bool{"/": true, "/a": true},
		},
		{
			name:  "group of several agents",
			txt:   "User-agent: googlebot\nUser-agent: domaind\nDisallow: /g\n\nUser-agent: *\nDisallow: /s\n",
			paths: map[string]bool{"/g": false, "/s": true},
		},
		{
			name:  "groups for the same agent are merged",
			txt:   "User-agent: domaind\nDisallow: /a\n\nUser-agent: other\nDisallow: /b\n\nUser-agent: domaind\nDisallow: /c\n",
			paths: map[string]bool{"/a": false, "/b": true, "/c": false},
		},
		{
			name:  "own group without rules allows all, star is not used",
			txt:   "User-agent: *\nDisallow: /\n\nUser-agent: domaind\n",
			paths: map[string]bool{"/": true, "/a": true},
		},
		{
			name:  "empty disallow restricts nothing",
			txt:   "User-agent: *\nDisallow:\n",
			paths: map[string]bool{"/": true, "/a": true},
		},
		{
			name:  "a blank line does not end a list of agents",
			txt:   "User-agent: domaind\n\nUser-agent: *\nDisallow: /\n",
			paths: map[string]bool{"/": false, "/a": false},
		},
		{
			name:  "rules before any user-agent are ignored",
			txt:   "Disallow: /\nUser-agent: *\nDisallow: /b\n",
			paths: map[string]bool{"/a": true, "/b": false},
		},
		{
			name:  "comments, CRLF, BOM, odd case and spacing",
			txt:   "\xEF\xBB\xBF# hello\r\nuser-AGENT : * # all\r\n  disallow :  /tmp # temp\r\nSitemap: https://example.com/s.xml\r\n",
			paths: map[string]bool{"/tmp/x": false, "/tmpl": false, "/": true},
		},
		{
			name:  "robots.txt is always allowed",
			txt:   "User-agent: *\nDisallow: /\n",
			paths: map[string]bool{"/robots.txt": true, "/": false, "/robots.txt?x": false},
		},
		{
			name:  "percent-encoding and UTF-8 compare as the same octets",
			txt:   "User-agent: *\nDisallow: /caf\u00e9\nDisallow: /a%3cb\n",
			paths: map[string]bool{"/caf%C3%A9": false, "/caf%c3%a9/menu": false, "/cafe": true, "/a%3Cb": false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := parseRobots([]byte(tt.txt), robotsAgent)
			for path, want := range tt.paths {
				if got := r.allowed(path); got != want {
					t.Errorf("allowed(%q) = %v, want %v", path, got, want)
				}
			}
		})
	}
}

func TestRobotsForStatus(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /private\n")
	tests := []struct {
		name           string
		status         int
		public, secret bool // allowed("/public"), allowed("/private")
	}{
		{"2xx is obeyed", 200, true, false},
		{"4xx allows all", 404, true, true},
		{"401 allows all too (RFC 9309)", 401, true, true},
		{"redirects left over allow all", 301, true, true},
		{"5xx disallows all", 503, false, false},
		{"500 disallows all", 500, false, false},
		{"no answer disallows all", 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := robotsForStatus(tt.status, body)
			if got := r.allowed("/public"); got != tt.public {
				t.Errorf("allowed(/public) = %v, want %v", got, tt.public)
			}
			if got := r.allowed("/private"); got != tt.secret {
				t.Errorf("allowed(/private) = %v, want %v", got, tt.secret)
			}
			if !r.allowed("/robots.txt") {
				t.Error("/robots.txt is not allowed")
			}
		})
	}
}

func TestPathQuery(t *testing.T) {
	tests := map[string]string{
		"http://h":             "/",
		"http://h/a b":         "/a%20b",
		"http://h/caf\u00e9?q": "/caf%C3%A9?q",
		"http://h/p?x=1&y=2":   "/p?x=1&y=2",
	}
	for raw, want := range tests {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := pathQuery(u); got != want {
			t.Errorf("pathQuery(%q) = %q, want %q", raw, got, want)
		}
	}
}

// FuzzRobots feeds hostile robots.txt files and paths to the parser and
// matcher: they must not panic, must always allow /robots.txt, and must
// answer the same for a path however its escapes are cased.
func FuzzRobots(f *testing.F) {
	f.Add("User-agent: *\nDisallow: /*a*b*c$\nAllow: /a\n", "/aXbYc")
	f.Add("User-agent: domaind\nDisallow: $\nDisallow: *\n", "/")
	f.Add("user-agent:*\ndisallow:/%zz%\n", "/%zz%41")
	f.Fuzz(func(t *testing.T, txt, path string) {
		r := parseRobots([]byte(txt), robotsAgent)
		if !r.allowed("/robots.txt") {
			t.Fatal("/robots.txt not allowed")
		}
		if r.allowed(path) != r.allowed(normalizeEncoding(path)) {
			t.Fatalf("allowed(%q) changes with its encoding", path)
		}
	})
}
