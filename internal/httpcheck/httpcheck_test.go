package httpcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/domaind/domaind/internal/fetch"
)

func newClient(allow ...string) *fetch.Client {
	var prefixes []netip.Prefix
	for _, a := range allow {
		prefixes = append(prefixes, netip.MustParsePrefix(a))
	}
	return fetch.New(fetch.Options{Allow: prefixes})
}

func serve(tb testing.TB, h http.HandlerFunc) string {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv.URL
}

func TestCheckFollowsRedirects(t *testing.T) {
	other := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.String() {
		case "/dir/c":
			w.Header().Set("Location", "../final?x=1") // relative to /dir/c
			w.WriteHeader(http.StatusTemporaryRedirect)
		case "/final?x=1":
			w.Write([]byte("done"))
		default:
			t.Errorf("second server got %s", r.URL)
		}
	})
	first := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/b", http.StatusMovedPermanently)
		case "/b":
			http.Redirect(w, r, other+"/dir/c", http.StatusFound)
		default:
			t.Errorf("first server got %s", r.URL)
		}
	})
	// The chain ends on the second server.
	final := other + "/final?x=1"

	res, err := Check(context.Background(), newClient("127.0.0.0/8"), first+"/a")
	if err != nil {
		t.Fatal(err)
	}
	want := []Redirect{
		{first + "/a", 301, first + "/b"},
		{first + "/b", 302, other + "/dir/c"},
		{other + "/dir/c", 307, final},
	}
	if diff := cmp.Diff(want, res.Redirects); diff != "" {
		t.Errorf("redirects (-want +got):\n%s", diff)
	}
	if res.URL != first+"/a" || res.FinalURL != final || res.Status != 200 {
		t.Errorf("url, final_url, status = %s, %s, %d; want %s, %s, 200", res.URL, res.FinalURL, res.Status, first+"/a", final)
	}
}

func TestCheckReportsTheFinalResponse(t *testing.T) {
	body := strings.Repeat("x", 1<<20) // more than is read
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("User-Agent"); !strings.HasPrefix(got, "domaind-http-headers/") {
			t.Errorf("User-Agent = %q", got)
		}
		h := w.Header()
		h.Set("Date", "Mon, 02 Jan 2006 15:04:05 GMT")
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Strict-Transport-Security", "max-age=63072000")
		h.Add("Set-Cookie", "a=1")
		h.Add("Set-Cookie", "b=2")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(body))
	})
	res, err := Check(context.Background(), newClient("127.0.0.0/8"), srv+"/missing")
	if err != nil {
		t.Fatal(err)
	}
	want := &Result{
		URL:         srv + "/missing",
		FinalURL:    srv + "/missing",
		Status:      404,
		HTTPVersion: "HTTP/1.1",
		Redirects:   []Redirect{},
		Headers: http.Header{
			"Date":                      {"Mon, 02 Jan 2006 15:04:05 GMT"},
			"Content-Type":              {"text/html; charset=utf-8"},
			"Content-Length":            {strconv.Itoa(len(body))},
			"X-Content-Type-Options":    {"nosniff"},
			"Strict-Transport-Security": {"max-age=63072000"},
			"Set-Cookie":                {"a=1", "b=2"},
		},
		Security: Security{
			Present: []string{"Strict-Transport-Security", "X-Content-Type-Options"},
			Missing: []string{"Content-Security-Policy", "Permissions-Policy", "Referrer-Policy", "X-Frame-Options"},
		},
		ResponseMS: res.ResponseMS,
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Check (-want +got):\n%s", diff)
	}
	if res.ResponseMS < 0 || res.ResponseMS > 5000 {
		t.Errorf("response_ms = %d", res.ResponseMS)
	}
}

func TestSecurity(t *testing.T) {
	all := http.Header{
		"Content-Security-Policy":   {"default-src 'self'"},
		"Permissions-Policy":        {"geolocation=()"},
		"Referrer-Policy":           {"no-referrer"},
		"Strict-Transport-Security": {"max-age=63072000"},
		"X-Content-Type-Options":    {"nosniff"},
		"X-Frame-Options":           {"DENY"},
	}
	tests := []struct {
		name   string
		header http.Header
		https  bool
		want   Security
	}{
		{"all sent", all, true, Security{Present: SecurityHeaders, Missing: []string{}}},
		{"none over https", http.Header{}, true, Security{Present: []string{}, Missing: SecurityHeaders}},
		{"none over http: HSTS is not expected", http.Header{}, false, Security{
			Present: []string{},
			Missing: []string{"Content-Security-Policy", "Permissions-Policy", "Referrer-Policy", "X-Content-Type-Options", "X-Frame-Options"},
		}},
		{"frame-ancestors stands for X-Frame-Options", http.Header{
			"Content-Security-Policy": {"default-src 'self'; Frame-Ancestors 'none'"},
		}, true, Security{
			Present: []string{"Content-Security-Policy"},
			Missing: []string{"Permissions-Policy", "Referrer-Policy", "Strict-Transport-Security", "X-Content-Type-Options"},
		}},
		{"a CSP without frame-ancestors does not", http.Header{
			"Content-Security-Policy": {"default-src 'self'; script-src-elem frame-ancestors.example"},
		}, true, Security{
			Present: []string{"Content-Security-Policy"},
			Missing: []string{"Permissions-Policy", "Referrer-Policy", "Strict-Transport-Security", "X-Content-Type-Options", "X-Frame-Options"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, security(tt.header, tt.https)); diff != "" {
				t.Errorf("security (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckRefusesInternalTargets(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-private":
			http.Redirect(w, r, "http://10.0.0.1/", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		}
	})
	tests := []struct {
		name  string
		c     *fetch.Client
		start string
	}{
		{"redirect to a private address", newClient("127.0.0.1/32"), srv + "/to-private"},
		{"redirect to cloud metadata", newClient("127.0.0.1/32"), srv + "/to-metadata"},
		{"redirect to a file", newClient("127.0.0.1/32"), srv + "/to-file"},
		{"loopback start without an allowance", newClient(), "http://127.0.0.1/"},
		{"loopback server without an allowance", newClient(), srv + "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Check(context.Background(), tt.c, tt.start)
			if _, ok := errors.AsType[*fetch.BlockedError](err); !ok {
				t.Errorf("Check = %+v, %v; want a *fetch.BlockedError", res, err)
			}
		})
	}
}

func TestCheckStopsEndlessChains(t *testing.T) {
	var hits atomic.Int64
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/ping":
			http.Redirect(w, r, "/pong", http.StatusFound)
		case "/pong":
			http.Redirect(w, r, "/ping", http.StatusFound)
		default: // /n/1 → /n/1/n/1 → …
			http.Redirect(w, r, r.URL.Path+r.URL.Path, http.StatusFound)
		}
	})
	tests := []struct {
		name     string
		path     string
		want     error
		wantHits int64
	}{
		{"loop", "/ping", ErrRedirectLoop, 2},
		{"endless", "/n/1", ErrTooManyRedirects, MaxRedirects + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits.Store(0)
			res, err := Check(context.Background(), newClient("127.0.0.0/8"), srv+tt.path)
			if !errors.Is(err, tt.want) {
				t.Errorf("Check = %+v, %v; want %v", res, err, tt.want)
			}
			if got := hits.Load(); got != tt.wantHits {
				t.Errorf("server hit %d times, want %d", got, tt.wantHits)
			}
		})
	}
}

func TestCheckHonoursTheContext(t *testing.T) {
	release := make(chan struct{})
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Check(ctx, newClient("127.0.0.0/8"), srv)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Check = %+v, %v; want the context's deadline", res, err)
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("Check took %v; the context ended after 200ms", elapsed)
	}
}

// The headers answered (and cached) are bounded: at most 100 values, in
// the order of their names, each cut to 1 KiB without splitting a UTF-8
// character, with headers_cut saying so. The security report still sees
// them all.
func TestHeadersAreBounded(t *testing.T) {
	long := strings.Repeat("é", 600) // 1,200 bytes
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("A-Long", long)
		for i := range 150 {
			h.Add(fmt.Sprintf("A-Many-%03d", i), "v")
		}
		h.Set("X-Frame-Options", "DENY")
	})
	res, err := Check(context.Background(), newClient("127.0.0.0/8"), srv+"/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	var got struct {
		Headers    map[string][]string `json:"headers"`
		HeadersCut bool                `json:"headers_cut"`
		Security   Security            `json:"security"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	values := 0
	for _, vs := range got.Headers {
		values += len(vs)
	}
	if values != 100 || !got.HeadersCut {
		t.Errorf("%d header values, headers_cut %v; want 100, true", values, got.HeadersCut)
	}
	if a := got.Headers["A-Long"]; len(a) != 1 || a[0] != long[:1024] {
		t.Errorf("A-Long = %d bytes, want its first 1,024 (512 characters)", len(strings.Join(a, "")))
	}
	want := []string{"A-Long"}
	for i := range 99 {
		want = append(want, fmt.Sprintf("A-Many-%03d", i))
	}
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(got.Headers))); diff != "" {
		t.Errorf("headers answered, the first 100 by name (-want +got):\n%s", diff)
	}
	if !slices.Contains(got.Security.Present, "X-Frame-Options") {
		t.Errorf("security = %+v, want X-Frame-Options present though not among the headers answered", got.Security)
	}
}

// A response whose header is too large to read is an error that says so.
func TestAHeaderTooLargeIsAnError(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Padding", strings.Repeat("x", 1<<20))
	})
	res, err := Check(context.Background(), newClient("127.0.0.0/8"), srv+"/")
	if err == nil || !strings.Contains(err.Error(), "headers exceeded") {
		read := 0
		if res != nil {
			read = len(res.Headers.Get("X-Padding"))
		}
		t.Errorf("Check = %d bytes of X-Padding read, %v; want an error saying the headers are too large", read, err)
	}
}
