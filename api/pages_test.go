package api

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode"
)

// Amounts on the pages: thousands grouped, refunds negative, also under
// a unit.
func TestMoney(t *testing.T) {
	for _, tc := range []struct {
		cents int64
		want  string
	}{
		{123_456, "1,234.56 USD"},
		{5, "0.05 USD"},
		{0, "0.00 USD"},
		{-50, "-0.50 USD"},
		{-1_234, "-12.34 USD"},
		{99_900, "999.00 USD"},
		{100_000_000_05, "100,000,000.05 USD"},
		{-123_456_78, "-123,456.78 USD"},
	} {
		if got := money("USD", tc.cents); got != tc.want {
			t.Errorf("money(USD, %d) = %q, want %q", tc.cents, got, tc.want)
		}
	}
}

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
		{"too long", "/" + strings.Repeat("a", 2001), "/account"},
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
