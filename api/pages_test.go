package api

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode"

	"github.com/chromedp/chromedp"
)

// The known ways past a naive "starts with one slash" check, each as the
// value the handler reads from the query or form (already decoded once).
func TestSafeNext(t *testing.T) {
	tests := []struct {
		name, next, want string
	}{
		{"local path", "/oauth/authorize?client_id=x&state=y", "/oauth/authorize?client_id=x&state=y"},
		{"trailing slash kept", "/docs/", "/docs/"},
		{"dot segments cleaned", "/a/./b/../c", "/a/c"},
		{"empty", "", "/account"},
		{"absolute URL", "https://evil.example/", "/account"},
		{"scheme-relative", "//evil.example/x", "/account"},
		{"backslash", "/\\evil.example", "/account"},
		{"dot then backslash", "/./\\evil.example", "/account"},
		{"encoded backslash", "/%5Cevil.example", "/account"},
		{"encoded backslash lower case", "/%5cevil.example", "/account"},
		{"dot then encoded backslash", "/./%5Cevil.example", "/account"},
		{"encoded slashes", "%2F%2Fevil.example", "/account"},
		{"slash then encoded slash", "/%2Fevil.example", "/account"},
		{"dot segment before two slashes", "/.//evil.example", "/evil.example"},
		{"parent segment before two slashes", "/a/..//evil.example", "/evil.example"},
		{"tab between slashes", "/\t/evil.example", "/account"},
		{"newline between slashes", "/\n/evil.example", "/account"},
		{"carriage return", "/\r\n/evil.example", "/account"},
		{"control character in the query", "/x?a=\x00", "/account"},
		{"javascript", "javascript:alert(1)", "/account"},
		{"javascript after a slash", "/javascript:alert(1)", "/javascript:alert(1)"},
		{"bad escape", "/%zz", "/account"},
		{"as long as can be", "/" + strings.Repeat("a", maxNext-1), "/" + strings.Repeat("a", maxNext-1)},
		{"too long", "/" + strings.Repeat("a", maxNext), "/account"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := safeNext(tt.next); got != tt.want {
				t.Errorf("safeNext(%q) = %q, want %q", tt.next, got, tt.want)
			}
		})
	}
}

// The check holds for what the browser finally receives: the Location
// http.Redirect writes for it.
func TestSignInRedirectStaysOnSite(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := newBrowser(t, env)
	b.signUp("next@example.com", "long-enough-pw")
	for _, raw := range []string{"/./%5Cevil.example", "/%2F%2Fevil.example", "%2F%2Fevil.example", "/%09/evil.example"} {
		res, _ := b.do("GET", "/login?next="+raw, "", "")
		if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != "/account" {
			t.Errorf("GET /login?next=%s signed in = %d to %q, want 303 to /account", raw, res.StatusCode, loc)
		}
	}
}

func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"/account", "//x", "/\\x", "/%5Cx", "/./\\x", "%2F%2Fx", "/\t/x", "javascript:x", "/a?b=c#d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		w := httptest.NewRecorder()
		http.Redirect(w, httptest.NewRequest("GET", "/login", nil), got, http.StatusSeeOther)
		loc := w.Header().Get("Location")
		u, err := url.Parse(loc)
		if err != nil {
			t.Fatalf("safeNext(%q) = %q: Location %q does not parse: %v", next, got, loc, err)
		}
		if u.Scheme != "" || u.Host != "" || !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") ||
			strings.ContainsFunc(loc, func(r rune) bool { return r == '\\' || unicode.IsControl(r) }) {
			t.Fatalf("safeNext(%q) = %q leads off the site (Location %q)", next, got, loc)
		}
		if dec, err := url.PathUnescape(u.Path); err == nil && (strings.HasPrefix(dec, "//") || strings.Contains(dec, "\\")) {
			t.Fatalf("safeNext(%q) = %q decodes to %q", next, got, dec)
		}
	})
}

// Every page links the icon, and the two places browsers look for it
// answer it (the unasked /favicon.ico was a 404 on every page).
func TestFavicon(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for _, path := range []string{"/favicon.ico", "/favicon.svg"} {
		w := env.request("GET", path, "")
		if w.Code != 200 || w.Header().Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(w.Body.String(), "<svg ") {
			t.Errorf("GET %s = %d %s %.40q", path, w.Code, w.Header().Get("Content-Type"), w.Body.String())
		}
	}
	if w := env.request("GET", "/login", ""); !strings.Contains(w.Body.String(), `<link rel="icon" href="/favicon.svg"`) {
		t.Errorf("the sign-in page links no icon")
	}
}

// A person who follows a wrong link gets a page in words with a way back;
// API clients, and anything that does not ask for HTML first, keep the
// API's error shape.
func TestUnknownPagesAnswerBrowsersInWords(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" // Chromium's
	for _, path := range []string{"/nowhere", "/r/not-a-code"} {
		w := env.request("GET", path, "", "Accept", browser)
		if body := w.Body.String(); w.Code != 404 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") ||
			!strings.Contains(body, "<h1>Page not found</h1>") || !strings.Contains(body, `href="/"`) {
			t.Errorf("a browser at %s = %d %s:\n%s", path, w.Code, w.Header().Get("Content-Type"), body)
		}
	}
	for _, tc := range []struct{ method, path, accept string }{
		{"GET", "/nowhere", "*/*"},
		{"GET", "/nowhere", "application/json, text/html"},
		{"GET", "/api/nowhere", browser},
		{"POST", "/nowhere", browser},
		{"GET", "/r/not-a-code", ""},
	} {
		wantError(t, tc.method+" "+tc.path+" Accept: "+tc.accept, env.request(tc.method, tc.path, "", "Accept", tc.accept), 404, "not_found")
	}
}

// In a real browser: a mistyped address shows the not-found page, whose
// link leads home.
func TestBrowserNotFoundPage(t *testing.T) {
	_, srv := servedEnv(t)
	ctx := newChromium(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/mistyped"), chromedp.WaitVisible(chromedp.CSS("h1"))); err != nil {
		t.Fatalf("a mistyped address: %v", err)
	}
	checkPage(t, ctx, "not-found")
	heading, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
	if err != nil {
		t.Fatal(err)
	}
	problem, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#problem")))
	if err != nil {
		t.Fatal(err)
	}
	if heading != "Page not found" || !strings.Contains(problem, "/mistyped") {
		t.Errorf("the page says %q, %q", heading, problem)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#problem + p a[href="/"]`)), chromedp.WaitVisible(chromedp.CSS("#search-form"))); err != nil {
		t.Fatalf("the way home: %v", err)
	}
	if home, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1"))); err != nil || home != "Find a domain name" {
		t.Errorf("after the link home the heading is %q, %v; want the home page's", home, err)
	}
}
