package siteprobe

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var htmlHeader = http.Header{"Content-Type": {"text/html"}}

// TestClassifyRecordedPages judges every page under testdata (see
// testdata/SOURCES.md); each verdict was read off the page by hand.
// Signal is checked where it names a signal, the script of an app, or a
// listing; counts of words are left to the rule tests.
func TestClassifyRecordedPages(t *testing.T) {
	tests := []struct {
		file             string
		reason           Reason
		signal, redirect string
	}{
		{"active-app-arkose.html", ReasonActive, "script /vendors~main.bundle.js", ""},
		{"active-app-twitter.html", ReasonActive, "script /api/features.js", ""},
		{"active-directory-listing.html", ReasonActive, "directory listing of 5 entries", ""},
		{"active-sourceforge-accessrunner.html", ReasonActive, "", ""}, // "under construction" in a long page
		{"active-sourceforge-autoglade.html", ReasonActive, "", ""},    // "coming soon" only in a comment
		{"empty-seedprod-coming-soon.html", ReasonEmpty, "0 words", ""},
		{"empty-xhtml.html", ReasonEmpty, "0 words", ""},
		{"parked-caf-related-links.html", ReasonParked, "/adsense/domains/caf.js", ""},
		{"parked-godaddy-lander.html", ReasonParked, "/adsense/domains/caf.js", ""},
		{"parked-namecheap.html", ReasonParked, "cdnpark.com", ""},
		{"parked-parkingcrew.html", ReasonParked, "/adsense/domains/caf.js", ""},
		{"redirect-rdweb.html", ReasonClientRedirect, "", "/rdweb"},
		{"registrar-101domain.html", ReasonRegistrarDefault, "future home of", ""},
		{"registrar-coming-soon.html", ReasonRegistrarDefault, "coming soon", ""},
		{"registrar-cpanel-redirect.html", ReasonRegistrarDefault, "/cgi-sys/defaultwebpage.cgi", ""},
		{"registrar-loopia.html", ReasonRegistrarDefault, "parked at loopia", ""},
		{"registrar-mediatemple.html", ReasonRegistrarDefault, "server default page", ""},
		{"server-apache-docroot.html", ReasonServerDefault, "it works!", ""},
		{"server-apache-it-works.html", ReasonServerDefault, "it works!", ""},
		{"server-iis.html", ReasonServerDefault, "iis windows server", ""},
		{"server-nginx.html", ReasonServerDefault, "welcome to nginx!", ""},
	}
	files, err := filepath.Glob("testdata/*.html")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(tests) {
		t.Errorf("testdata has %d pages, the table %d: give every page its verdict", len(files), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := Classify(http.StatusOK, htmlHeader, readTestdata(t, tt.file))
			if got.Reason != tt.reason || got.Reason.Active() != tt.reason.Active() {
				t.Errorf("Classify = %+v; want reason %s", got, tt.reason)
			}
			if tt.signal != "" && got.Signal != tt.signal {
				t.Errorf("Signal = %q; want %q", got.Signal, tt.signal)
			}
			if got.Redirect != tt.redirect {
				t.Errorf("Redirect = %q; want %q", got.Redirect, tt.redirect)
			}
		})
	}
}

func readTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestClassifyRules covers the rules' edges with pages written for the
// test (not recorded).
func TestClassifyRules(t *testing.T) {
	long := strings.Repeat("Our bakery sells bread and cakes every day this week. ", 10) // 100 words
	tests := []struct {
		name   string
		status int
		header http.Header
		body   string
		want   Verdict
	}{
		{"a 404 is not ok", 404, htmlHeader, "<p>" + long, Verdict{Reason: ReasonNotOK, Signal: "status 404"}},
		{"a 3xx left unfollowed is not ok", 301, htmlHeader, "", Verdict{Reason: ReasonNotOK, Signal: "status 301"}},
		{"a page of text", 200, htmlHeader, "<p>" + long, Verdict{Reason: ReasonActive, Signal: "100 words"}},
		{"nine words are empty", 200, htmlHeader, "<h1>Welcome</h1><p>one two three four five six seven eight</p>",
			Verdict{Reason: ReasonEmpty, Signal: "9 words"}},
		{"ten words are not", 200, htmlHeader, "<p>one two three four five six seven eight nine ten</p>",
			Verdict{Reason: ReasonActive, Signal: "10 words"}},
		{"title, scripts, styles and noscript are not text", 200, htmlHeader,
			"<title>" + long + "</title><style>p{}</style><script>var a = 'one two three four five six seven eight nine ten';</script>" +
				"<noscript>You need to enable JavaScript to run this app, please turn it on now</noscript>",
			Verdict{Reason: ReasonEmpty, Signal: "0 words"}},
		{"each Chinese character counts as a word", 200, htmlHeader, "<p>欢迎光临我们的面包店每天新鲜出炉</p>",
			Verdict{Reason: ReasonActive, Signal: "16 words"}},
		{"text is decoded by its charset", 200, http.Header{"Content-Type": {"text/html; charset=windows-1251"}},
			"<p>\xcf\xf0\xe8\xe2\xe5\xf2 \xec\xe8\xf0 \xcf\xf0\xe8\xe2\xe5\xf2 \xec\xe8\xf0 \xcf\xf0\xe8\xe2\xe5\xf2 \xec\xe8\xf0 \xcf\xf0\xe8\xe2\xe5\xf2 \xec\xe8\xf0 \xcf\xf0\xe8\xe2\xe5\xf2 \xec\xe8\xf0</p>",
			Verdict{Reason: ReasonActive, Signal: "10 words"}},
		{"no Content-Type: sniffed", 200, http.Header{}, "<!DOCTYPE html><html><body><h1>It works!</h1></body></html>",
			Verdict{Reason: ReasonServerDefault, Signal: "it works!"}},
		{"plain text is read as text", 200, http.Header{"Content-Type": {"text/plain"}}, "OK",
			Verdict{Reason: ReasonEmpty, Signal: "1 words"}},
		{"JSON is a service", 200, http.Header{"Content-Type": {"application/json"}}, `{"status":"up"}`,
			Verdict{Reason: ReasonActive, Signal: "application/json body"}},
		{"an empty JSON body is empty", 200, http.Header{"Content-Type": {"application/json"}}, " \n",
			Verdict{Reason: ReasonEmpty, Signal: "empty application/json body"}},
		{"weak signals do not count on a long page", 200, htmlHeader, "<h2>Coming soon</h2><p>" + long,
			Verdict{Reason: ReasonActive, Signal: "102 words"}},
		{"strong signals do", 200, htmlHeader, "<p>" + long + "Buy this domain today.",
			Verdict{Reason: ReasonParked, Signal: "buy this domain"}},
		{"GoDaddy's parked root page sends the browser to /lander", 200, htmlHeader,
			`<!DOCTYPE html><html><head><script>window.onload=function(){window.location.href="/lander"}</script></head></html>`,
			Verdict{Reason: ReasonParked, Signal: "/lander"}},
		{"a meta refresh elsewhere is a client redirect", 200, htmlHeader,
			`<meta http-equiv="Refresh" content="0; URL='/en/home.html'"><p>Redirecting…`,
			Verdict{Reason: ReasonClientRedirect, Signal: "1 words", Redirect: "/en/home.html"}},
		{"so is a script assigning location", 200, htmlHeader,
			`<script>document.location.replace("https://www.example.com/start")</script>`,
			Verdict{Reason: ReasonClientRedirect, Signal: "0 words", Redirect: "https://www.example.com/start"}},
		{"a refresh may give the target alone", 200, htmlHeader,
			`<meta http-equiv="refresh" content="0;https://brand.example/">`,
			Verdict{Reason: ReasonClientRedirect, Signal: "0 words", Redirect: "https://brand.example/"}},
		{"or with spaces around the equals sign", 200, htmlHeader,
			`<meta http-equiv="refresh" content="0; url = '/x'">`,
			Verdict{Reason: ReasonClientRedirect, Signal: "0 words", Redirect: "/x"}},
		{"a refresh that only reloads is not a redirect", 200, htmlHeader, `<meta http-equiv="refresh" content="30">`,
			Verdict{Reason: ReasonEmpty, Signal: "0 words"}},
		{"a long page's script redirect is not its business", 200, htmlHeader,
			`<script>function go(){ location.href = "/shop"; }</script><p>` + long,
			Verdict{Reason: ReasonActive, Signal: "100 words"}},
		{"an app with its data inline", 200, htmlHeader,
			`<div id="app"></div><script type="application/json" id="__data__">{"user":null}</script><script src="https://cdn.example.net/app.js"></script>`,
			Verdict{Reason: ReasonActive, Signal: "inline application data"}},
		{"scripts from elsewhere alone do not make an app", 200, htmlHeader,
			`<script src="https://www.googletagmanager.com/gtag/js?id=G-1"></script>`,
			Verdict{Reason: ReasonEmpty, Signal: "0 words"}},
		{"a listing with only cgi-bin/ is an empty account", 200, htmlHeader,
			`<title>Index of /</title><h1>Index of /</h1><ul><li><a href="/"> Parent Directory</a></li><li><a href="cgi-bin/"> cgi-bin/</a></li></ul>`,
			Verdict{Reason: ReasonServerDefault, Signal: "empty directory listing"}},
		{"a review site may link to a marketplace and quote its URLs", 200, htmlHeader,
			`<p>` + long + `<a href="/review/dan.com">Dan.com</a></p>` +
				`<script>window.__STATE__ = {"referring":["undeveloped.com","www.undeveloped.com"]};</script>` +
				`<script type="application/json">{"url":"https://dan.com/"}</script>`,
			Verdict{Reason: ReasonActive, Signal: "101 words"}},
		{"hosts match on their own name only", 200, htmlHeader,
			`<script src="https://cdn.jordan.com/app.js"></script><img src="https://img.above.company/x.png"><p>` + long,
			Verdict{Reason: ReasonActive, Signal: "100 words"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(tt.status, tt.header, []byte(tt.body))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Classify (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEverySignalFires puts each signal of the tables, alone, where it is
// looked for, and expects its family to name it: a needle that cannot
// match (upper case, a typo in where) fails here.
func TestEverySignalFires(t *testing.T) {
	for _, f := range families {
		for _, s := range f.signals {
			var page string
			switch s.in {
			case inText:
				page = "<html><body><p>" + strings.ToUpper(s.needle[:1]) + s.needle[1:] + "</p></body></html>"
			case inURL:
				sep := "."
				if !isWordByte(s.needle[0]) {
					sep = ""
				}
				page = `<html><head><script src="https://cdn.example` + sep + s.needle + `"></script></head></html>`
			case inRedirect:
				page = `<html><head><meta http-equiv="refresh" content="0;url=` + s.needle + `"></head></html>`
			case inScript:
				page = `<html><head><script>var marker = "` + s.needle + `";</script></head></html>`
			case inAttribute:
				page = `<html ` + s.needle + `="x"><body></body></html>`
			}
			got := Classify(http.StatusOK, htmlHeader, []byte(page))
			if got.Reason != f.reason || got.Signal != s.needle {
				t.Errorf("%s (in %d) on %s: Classify = %+v; want %s by it", s.needle, s.in, page, got, f.reason)
			}
		}
	}
}

func TestContains(t *testing.T) {
	tests := []struct {
		s, needle string
		want      bool
	}{
		{"https://www.dan.com/buy", "dan.com", true},
		{"https://dan.com", "dan.com", true},
		{"https://jordan.com/", "dan.com", false},
		{"https://my-dan.com/", "dan.com", false},
		{"https://dan.com.au/", "dan.com", false},
		{"https://dan.community/", "dan.com", false},
		{"see dan.com.", "dan.com", true},
		{"bit works! great", "it works!", false},
		{"it works!!", "it works!", true},
		{"it works! and jordan.com then dan.com", "dan.com", true},
		{"https://www.google.com/adsense/domains/caf.js", "/adsense/domains/caf.js", true},
	}
	for _, tt := range tests {
		if got := contains(tt.s, tt.needle); got != tt.want {
			t.Errorf("contains(%q, %q) = %v; want %v", tt.s, tt.needle, got, tt.want)
		}
	}
}
