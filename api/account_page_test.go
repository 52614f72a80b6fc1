package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	pagepkg "github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/oauth"
	"github.com/domaind/domaind/models"
)

// A person makes a developer key on the account page in a real browser:
// its secret shows once and calls the v1 API, the table shows what is
// left of its rate limit, a name too long is refused in words, and a
// revoked key no longer calls.
func TestBrowserDeveloperKeys(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := newChromium(t)
	toAccountPage(t, env, ctx, srv.URL, "keys@example.com")
	text := pageText(t, ctx)
	err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#key-name"), "my script"),
		chromedp.Click(chromedp.CSS("#create-key button")),
		chromedp.WaitVisible(chromedp.CSS("#new-key-secret")))
	if err != nil {
		t.Fatalf("creating a key: %v", err)
	}
	checkPage(t, ctx, "account-new-key")
	id, secret := text("#new-key-id"), text("#new-key-secret")
	call := func() int { return callWithKey(t, srv.URL, id, secret) }
	if code := call(); code != http.StatusOK {
		t.Fatalf("a call with the new key = %d", code)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/account"), chromedp.WaitVisible(chromedp.CSS("#keys"))); err != nil {
		t.Fatal(err)
	}
	if row := text(`tr[id="` + id + `"]`); !strings.Contains(row, "my script") || !strings.Contains(row, "left this minute") ||
		!strings.Contains(row, env.now.UTC().Format(pagepkg.Time)) || strings.Contains(row, "never") {
		t.Errorf("the key's row = %q, want its name, its last use (the call just made) and its rate limit", row)
	}
	if strings.Contains(text("body"), secret) {
		t.Error("the secret shows again after the page that made it")
	}
	// maxlength stops a person typing more; a hostile client sends it anyway.
	err = chromedp.Do(ctx, setInput("#key-name", strings.Repeat("k", 101)),
		chromedp.Click(chromedp.CSS("#create-key button")), chromedp.WaitVisible(chromedp.CSS(".error")))
	if err != nil {
		t.Fatalf("a name too long: %v", err)
	}
	if got := text(".error"); !strings.Contains(got, "100 characters") {
		t.Errorf("a name too long shows %q", got)
	}
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/account"),
		chromedp.Click(chromedp.CSS(`tr[id="`+id+`"] button`)), chromedp.WaitNotPresent(chromedp.CSS(`tr[id="`+id+`"]`)))
	if err != nil {
		t.Fatalf("revoking: %v", err)
	}
	if got := text("#keys tbody"); got != "No keys yet." {
		t.Errorf("the keys after revoking = %q", got)
	}
	if code := call(); code != http.StatusUnauthorized {
		t.Errorf("a call with the revoked key = %d, want 401", code)
	}
}

// A person double-clicks the key form's button in a real browser while
// the server is slow: the browser sends the form twice and shows the
// second answer only, which must hold the secret of the one key made.
func TestBrowserDoubleClickMakesOneKey(t *testing.T) {
	env, srv := servedEnv(t)
	var sends atomic.Int32
	second := make(chan struct{})
	app := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/account/keys" {
			switch sends.Add(1) {
			case 1: // slow: the second click comes before this answer
				select {
				case <-second:
				case <-time.After(10 * time.Second):
				}
			case 2:
				close(second)
			}
		}
		app.ServeHTTP(w, r)
	})
	ctx := newChromium(t)
	toAccountPage(t, env, ctx, srv.URL, "double@example.com")
	err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#key-name"), "clicked twice"),
		chromedp.ScrollIntoView(chromedp.CSS("#create-key button")))
	if err != nil {
		t.Fatalf("filling the key form: %v", err)
	}
	// Two clicks on the button's place, as a mouse makes them: no look-up
	// of the button between them, whose page may be leaving.
	at, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const r = document.querySelector("#create-key button").getBoundingClientRect();
		return [r.x + r.width / 2, r.y + r.height / 2] })()`))
	if err != nil || len(at) != 2 {
		t.Fatalf("the button's place = %v, %v", at, err)
	}
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(at[0], at[1])); err != nil {
		t.Fatal(err)
	}
	// The second click comes once the first send is on its way, as a
	// person's does (two clicks in one instant make one send).
	for deadline := time.Now().Add(10 * time.Second); sends.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first click sent nothing")
		}
	}
	err = chromedp.Do(ctx, chromedp.MouseClickXY(at[0], at[1]), chromedp.WaitVisible(chromedp.CSS("#new-key-secret")))
	if err != nil {
		t.Fatalf("creating a key with a double click: %v", err)
	}
	if n := sends.Load(); n != 2 {
		t.Fatalf("the browser sent the form %d times, want 2: the test shows nothing", n)
	}
	text := pageText(t, ctx)
	id, secret := text("#new-key-id"), text("#new-key-secret")
	var keys []models.APIKey
	if err := env.db.Where("name = ?", "clicked twice").Find(&keys).Error; err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].ID != id {
		t.Fatalf("%d keys made by the double click (the page shows %q), want one, the one shown", len(keys), id)
	}
	if code := callWithKey(t, srv.URL, id, secret); code != http.StatusOK {
		t.Errorf("a call with the secret the second answer shows = %d, want 200", code)
	}
}

// toAccountPage makes an account of email and signs in to it in the
// browser ctx, on the service at base, which shows the account page.
func toAccountPage(t *testing.T, env *testEnv, ctx context.Context, base, email string) {
	t.Helper()
	newBrowser(t, env).signUp(email, "a-long-password")
	err := chromedp.Do(ctx, chromedp.Navigate(base+"/login"),
		chromedp.SendKeys(chromedp.CSS("#email"), email),
		chromedp.SendKeys(chromedp.CSS("#password"), "a-long-password"),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#create-key")))
	if err != nil {
		t.Fatalf("signing in as %s: %v", email, err)
	}
}

// callWithKey calls the v1 API at base with a developer key and returns
// the answer's status.
func callWithKey(t *testing.T, base, id, secret string) int {
	t.Helper()
	r, _ := http.NewRequest("GET", base+"/api/v1/domains/available?domain=example.com", nil)
	r.Header.Set("x-api-key", id)
	r.Header.Set("x-api-secret", secret)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The key form sent again (its button pressed twice, its answer reloaded)
// makes no second key: at once it shows the first key's secret again (a
// double click shows the second answer only), later it shows none. A form
// without its token, from a page of before, makes none either and says to
// load the page again; a refused form can be sent again.
func TestAKeyFormSentAgainMakesNoSecondKey(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := newBrowser(t, env)
	b.signUp("twice@example.com", "a-long-password")
	keys := func() int {
		t.Helper()
		res, body := b.json("GET", "/api/v1/keys", "")
		if res.StatusCode != 200 {
			t.Fatalf("listing keys = %d %s", res.StatusCode, body)
		}
		return strings.Count(body, `"name"`)
	}
	form := b.formFields("/account")
	form.Set("name", strings.Repeat("k", 101))
	if res, body := b.form("/account/keys", form); res.StatusCode != 400 || !strings.Contains(body, "100 characters") {
		t.Fatalf("a name too long = %d %s", res.StatusCode, body)
	}
	form.Set("name", "my script")
	secret := func(body string) string {
		_, rest, _ := strings.Cut(body, `id="new-key-secret">`)
		s, _, _ := strings.Cut(rest, "<")
		return s
	}
	res, body := b.form("/account/keys", form)
	first := secret(body)
	if res.StatusCode != 201 || first == "" {
		t.Fatalf("the form sent again with a good name = %d %s", res.StatusCode, body)
	}
	if res, body = b.form("/account/keys", form); res.StatusCode != 201 || secret(body) != first {
		t.Errorf("the form sent a third time at once = %d, secret %q; want 201 with the first secret %q", res.StatusCode, secret(body), first)
	}
	env.now = env.now.Add(3 * time.Minute)
	res, body = b.form("/account/keys", form)
	if res.StatusCode != 409 || !strings.Contains(body, "sent before") || strings.Contains(body, `id="new-key-secret"`) {
		t.Errorf("the form sent three minutes later = %d %s, want 409 saying it was sent and no secret", res.StatusCode, body)
	}
	res, body = b.form("/account/keys", url.Values{"csrf_token": form["csrf_token"], "name": {"from an old page"}})
	if res.StatusCode != 400 || !strings.Contains(body, "load the page again") {
		t.Errorf("a form without its token = %d %s", res.StatusCode, body)
	}
	if n := keys(); n != 1 {
		t.Errorf("%d keys after the sends, want one", n)
	}
}

// A person sees the app they allowed on the account page, in a real
// browser, and ends its access there: the row goes, and the app's token
// no longer works.
func TestBrowserEndAnAppsAccess(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := newChromium(t)
	newBrowser(t, env).signUp("apps@example.com", "a-long-password")
	var u models.User
	if err := env.db.Take(&u, "email = ?", "apps@example.com").Error; err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	auth := env.srv.svc.OAuth
	app, err := auth.Register(bg, "Price Watcher", []string{"https://app.example/cb"})
	if err != nil {
		t.Fatal(err)
	}
	verifier := oauth2.GenerateVerifier()
	r := oauth.AuthorizeRequest{ResponseType: "code", ClientID: app.ID, RedirectURI: "https://app.example/cb",
		CodeChallenge: oauth2.S256ChallengeFromVerifier(verifier), CodeChallengeMethod: "S256"}
	code, err := auth.IssueCode(bg, r, u.ID, oauth.ScopePricingRead)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := auth.ExchangeCode(bg, app.ID, code, r.RedirectURI, verifier, "")
	if err != nil {
		t.Fatal(err)
	}

	text := pageText(t, ctx)
	row := `#apps tr[id="app-` + app.ID + `"]`
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/login"),
		chromedp.SendKeys(chromedp.CSS("#email"), "apps@example.com"),
		chromedp.SendKeys(chromedp.CSS("#password"), "a-long-password"),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS(row)))
	if err != nil {
		t.Fatalf("the account page with an app: %v", err)
	}
	checkPage(t, ctx, "account-apps")
	if got := text(row); !strings.Contains(got, "Price Watcher") || !strings.Contains(got, oauth.ScopePricingRead) {
		t.Errorf("the app's row = %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(row+" button")), chromedp.WaitNotPresent(chromedp.CSS(row))); err != nil {
		t.Fatalf("ending the app's access: %v", err)
	}
	if got := text("#apps tbody"); got != "No apps." {
		t.Errorf("the apps after ending one = %q", got)
	}
	if _, err := auth.Authenticate(bg, tok.AccessToken); !errors.Is(err, oauth.ErrInvalidToken) {
		t.Errorf("the app's token after its access ended: %v", err)
	}
}
