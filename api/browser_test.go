package api

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/testtool"
)

// browserPath is the Chromium a person's pages are tested in ($CHROMIUM,
// else chromium on the PATH).
func browserPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	return testtool.Path(t, "the pages are tested in a real browser (Debian's chromium)", "chromium", "chromium-browser")
}

// newChromium starts a headless Chromium for the test, with the options
// extra, and returns its context, whose minute starts now: make the test's
// env first (on a shared Redis Cluster, servedEnv waits for its turn).
// The browser tests do not run in parallel: a Chromium and its renderers
// take most of the machine's two cores while a page loads, and the pages'
// waits have deadlines.
func newChromium(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browserPath(t)),
		chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	opts = append(opts, extra...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

// pageText returns a reader of the text of an element of the page ctx
// shows, by CSS selector; a selector that finds nothing fails the test.
func pageText(t *testing.T, ctx context.Context) func(sel string) string {
	return func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return s
	}
}

// opsChromium is newChromium signed in as ops: it sends the ops login
// with every request, as a browser does once the person typed it in.
func opsChromium(t *testing.T) context.Context {
	t.Helper()
	ctx := newChromium(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:ops-secret"))
	if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": auth}}); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// servedEnv is a test env behind a real HTTP server whose URL is the base URL.
func servedEnv(t *testing.T) (*testEnv, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(nil)
	t.Cleanup(srv.Close)
	env := newTestEnv(t, func(c *config.Config) { c.BaseURL = mustURL(t, srv.URL) })
	srv.Config.Handler = env.checkedHandler()
	return env, srv
}

// A person signs up, signs in and out on the pages, in a real browser,
// under the pages' Content-Security-Policy.
func TestBrowserSignUpSignInAndOut(t *testing.T) {
	_, srv := servedEnv(t)
	ctx := newChromium(t)
	fill := func(email string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.SendKeys(chromedp.CSS("#email"), email),
			chromedp.SendKeys(chromedp.CSS("#password"), "a-long-password"),
			chromedp.Click(chromedp.CSS("button[type=submit]")),
		)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/signup"), chromedp.WaitVisible(chromedp.CSS("#email"))); err != nil {
		t.Fatal(err)
	}
	checkPage(t, ctx, "signup")
	if err := chromedp.Do(ctx, fill("page-person@example.com"), chromedp.WaitVisible(chromedp.CSS(".notice"))); err != nil {
		t.Fatalf("sign-up page: %v", err)
	}
	notice, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".notice")))
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, ctx, "signin")
	if err := chromedp.Do(ctx, fill("page-person@example.com"), chromedp.WaitVisible(chromedp.CSS(`form[action="/logout"]`))); err != nil {
		t.Fatalf("sign-in page: %v", err)
	}
	account, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, ctx, "account")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)), chromedp.WaitVisible(chromedp.CSS(`form[action="/login"]`))); err != nil {
		t.Fatalf("sign-out: %v", err)
	}
	afterOut, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(notice, "sign in with it") || !strings.Contains(account, "page-person@example.com") || !strings.HasSuffix(afterOut, "/login") {
		t.Errorf("notice %q, account page %q, after sign-out %q", notice, account, afterOut)
	}
}

// An OAuth client sends a signed-out person to authorize: they sign in,
// see the consent page, allow, and the browser lands on the client's
// redirect URI with a code (the CSP lets the consent form end there).
// The request is as long as can be (its redirect URI and state at their
// limits), and comes through the sign-in intact.
func TestBrowserOAuthConsent(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := newChromium(t)
	newBrowser(t, env).signUp("consenting@example.com", "a-long-password")

	var mu sync.Mutex
	var landed url.Values
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/callback/") { // the browser asks for a favicon too
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		landed = r.URL.Query()
		mu.Unlock()
		w.Write([]byte("<!doctype html><title>done</title><p id=done>client got the answer</p>"))
	}))
	t.Cleanup(cb.Close)
	b := newBrowser(t, env)
	redirect := cb.URL + "/callback/"
	c := registerClient(t, b, redirect+strings.Repeat(":", 2000-len(redirect)))
	c.conf.Endpoint = oauth2.Endpoint{AuthURL: srv.URL + "/oauth/authorize", TokenURL: srv.URL + "/api/oauth/token", AuthStyle: oauth2.AuthStyleInParams}
	verifier := oauth2.GenerateVerifier()
	state := strings.Repeat("é", 500/len("é"))
	authURL := c.conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))

	err := chromedp.Do(ctx,
		chromedp.Navigate(authURL),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/login"]`)),
		chromedp.SendKeys(chromedp.CSS("#email"), "consenting@example.com"),
		chromedp.SendKeys(chromedp.CSS("#password"), "a-long-password"),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("button[value=approve]")),
	)
	if err != nil {
		t.Fatalf("sign-in on the way to consent: %v", err)
	}
	checkPage(t, ctx, "consent")
	consent, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("button[value=approve]")), chromedp.WaitVisible(chromedp.CSS("#done"))); err != nil {
		t.Fatalf("consent: %v", err)
	}
	if !strings.Contains(consent, "Price Watcher") || !strings.Contains(consent, "consenting@example.com") {
		t.Errorf("consent page = %q", consent)
	}
	mu.Lock()
	got := landed
	mu.Unlock()
	if got.Get("state") != state || got.Get("iss") != srv.URL || got.Get("code") == "" {
		t.Fatalf("the client got %v, want the code, the state and iss", got)
	}
	if _, err := c.conf.Exchange(context.Background(), got.Get("code"), oauth2.VerifierOption(verifier)); err != nil {
		t.Errorf("exchanging the code the browser brought: %v", err)
	}
}
