package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/models"
)

// browser is an HTTP client with a cookie jar against a running test server.
type browser struct {
	tb     testing.TB
	base   string
	client *http.Client
}

func newBrowser(tb testing.TB, env *testEnv) *browser {
	tb.Helper()
	srv := httptest.NewServer(env.checkedHandler())
	tb.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	return &browser{tb: tb, base: srv.URL, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// do sends a request with an optional JSON or form body and header pairs,
// and returns the response and its body.
func (b *browser) do(method, path, contentType, body string, header ...string) (*http.Response, string) {
	b.tb.Helper()
	req, err := http.NewRequest(method, b.base+path, strings.NewReader(body))
	if err != nil {
		b.tb.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := b.client.Do(req)
	if err != nil {
		b.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res, string(out)
}

func (b *browser) json(method, path, body string, header ...string) (*http.Response, string) {
	b.tb.Helper()
	ct := ""
	if body != "" {
		ct = "application/json"
	}
	return b.do(method, path, ct, body, header...)
}

func (b *browser) form(path string, v url.Values) (*http.Response, string) {
	b.tb.Helper()
	return b.do("POST", path, "application/x-www-form-urlencoded", v.Encode())
}

// signUp creates an account and signs the browser in with it; it returns
// the session's CSRF token.
func (b *browser) signUp(email, password string) string {
	b.tb.Helper()
	creds := fmt.Sprintf(`{"email":%q,"password":%q}`, email, password)
	if res, body := b.json("POST", "/api/auth/signup", creds); res.StatusCode != 202 {
		b.tb.Fatalf("sign up %s = %d %s", email, res.StatusCode, body)
	}
	res, body := b.json("POST", "/api/auth/login", creds)
	if res.StatusCode != 200 {
		b.tb.Fatalf("sign in %s = %d %s", email, res.StatusCode, body)
	}
	var me meResponse
	if err := json.Unmarshal([]byte(body), &me); err != nil || me.CSRFToken == "" {
		b.tb.Fatalf("sign up body %s: %v", body, err)
	}
	return me.CSRFToken
}

func cookieNamed(res *http.Response, name string) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Served over https, the cookies carry the __Host- prefix (Secure, the
// whole site, no Domain), so no other host of the domain can set them: a
// session or form token under the plain name counts for nothing.
func TestCookiesOverHTTPSAreHostOnly(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(c *config.Config) { c.BaseURL, _ = url.Parse("https://domaind.example") })
	send := func(method, path, body string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "https://domaind.example"+path, strings.NewReader(body))
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		for _, ck := range cookies {
			r.AddCookie(ck)
		}
		return env.do(r)
	}
	creds := `{"email":"host@example.com","password":"host-only-password"}`
	if w := send("POST", "/api/auth/signup", creds); w.Code != 202 {
		t.Fatalf("sign up = %d %s", w.Code, w.Body)
	}
	w := send("POST", "/api/auth/login", creds)
	session := cookieNamed(w.Result(), "__Host-"+sessionCookie)
	if w.Code != 200 || session == nil || !session.Secure || session.Path != "/" || session.Domain != "" || cookieNamed(w.Result(), sessionCookie) != nil {
		t.Fatalf("sign in = %d, cookies %v; want the session as __Host-%s only, Secure, Path=/", w.Code, w.Result().Cookies(), sessionCookie)
	}
	if w := send("GET", "/api/auth/me", "", session); w.Code != 200 {
		t.Errorf("me with the __Host- session = %d %s", w.Code, w.Body)
	}
	tossed := &http.Cookie{Name: sessionCookie, Value: session.Value}
	if w := send("GET", "/api/auth/me", "", tossed); w.Code != 401 {
		t.Errorf("me with the session under the plain name = %d, want 401", w.Code)
	}
	csrf := cookieNamed(send("GET", "/login", "").Result(), "__Host-"+formCSRFCookie)
	if csrf == nil || !csrf.Secure || csrf.Path != "/" {
		t.Fatalf("the sign-in form's token cookie = %+v, want __Host-%s, Secure, Path=/", csrf, formCSRFCookie)
	}
	signIn := func(cookie *http.Cookie) *httptest.ResponseRecorder {
		form := url.Values{"email": {"host@example.com"}, "password": {"host-only-password"}, "csrf_token": {csrf.Value}}
		r := httptest.NewRequest("POST", "https://domaind.example/login", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.AddCookie(cookie)
		return env.do(r)
	}
	if w := signIn(csrf); w.Code != 303 || cookieNamed(w.Result(), "__Host-"+sessionCookie) == nil {
		t.Errorf("the sign-in form with its __Host- token = %d %s, want 303 and a session", w.Code, w.Body)
	}
	if w := signIn(&http.Cookie{Name: formCSRFCookie, Value: csrf.Value}); w.Code != 403 {
		t.Errorf("the sign-in form with its token under the plain name = %d, want 403", w.Code)
	}
}

func TestSignUpMeAndSignOut(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := newBrowser(t, env)
	res, body := b.json("POST", "/api/auth/signup", `{"email":" Ada@Example.COM ","password":"analytical-engine"}`)
	if res.StatusCode != 202 || cookieNamed(res, sessionCookie) != nil {
		t.Fatalf("sign up = %d %s (cookies %v), want 202 and no session: sign-up never signs in", res.StatusCode, body, res.Cookies())
	}
	res, body = b.json("POST", "/api/auth/login", `{"email":"ada@example.com","password":"analytical-engine"}`)
	if res.StatusCode != 200 || !strings.Contains(body, `"email":"ada@example.com"`) || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("sign in = %d %s (Cache-Control %q)", res.StatusCode, body, res.Header.Get("Cache-Control"))
	}
	ck := cookieNamed(res, sessionCookie)
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure || ck.Path != "/" || ck.MaxAge <= 0 {
		t.Fatalf("session cookie = %+v; want HttpOnly, SameSite=Lax, not Secure on http, site-wide, expiring", ck)
	}
	var u models.User
	if err := env.db.Take(&u, "email = ?", "ada@example.com").Error; err != nil || strings.Contains(u.PasswordHash, "analytical") {
		t.Fatalf("stored user %+v (%v): the password must be hashed", u, err)
	}
	var sessions []models.Session
	env.db.Find(&sessions)
	if len(sessions) != 1 || sessions[0].TokenHash == ck.Value {
		t.Fatalf("sessions = %+v; want one, stored as the token's hash", sessions)
	}

	res, body = b.json("GET", "/api/auth/me", "")
	var me meResponse
	if res.StatusCode != 200 || json.Unmarshal([]byte(body), &me) != nil || me.User.Email != "ada@example.com" || me.CSRFToken == "" {
		t.Fatalf("me = %d %s", res.StatusCode, body)
	}

	otherSessionsToken := newBrowser(t, env).signUp("other@example.com", "other-password")
	for _, bad := range []string{"", "wrong", me.CSRFToken + "x", otherSessionsToken} {
		res, body = b.json("POST", "/api/auth/logout", "", HeaderCSRFToken, bad)
		if res.StatusCode != 403 || !strings.Contains(body, "csrf_failed") {
			t.Errorf("logout with CSRF %q = %d %s, want 403 csrf_failed", bad, res.StatusCode, body)
		}
	}
	res, _ = b.json("POST", "/api/auth/logout", "", HeaderCSRFToken, me.CSRFToken)
	if res.StatusCode != 204 {
		t.Fatalf("logout = %d", res.StatusCode)
	}
	if ck := cookieNamed(res, sessionCookie); ck == nil || ck.MaxAge >= 0 {
		t.Errorf("logout did not delete the cookie: %+v", ck)
	}
	if n := env.db.Where("user_id = ?", u.ID).Find(&sessions).RowsAffected; n != 0 {
		t.Errorf("%d sessions of the user left after logout", n)
	}
	if res, body := b.json("GET", "/api/auth/me", ""); res.StatusCode != 401 || !strings.Contains(body, `"unauthorized"`) {
		t.Errorf("me after logout = %d %s, want 401", res.StatusCode, body)
	}
}

// The old cookie is worth nothing once the session ended, even replayed.
func TestSignedOutCookieIsDead(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := newBrowser(t, env)
	csrf := b.signUp("grace@example.com", "compiler-first")
	u, _ := url.Parse(b.base)
	old := b.client.Jar.Cookies(u)
	b.json("POST", "/api/auth/logout", "", HeaderCSRFToken, csrf)
	b.client.Jar.SetCookies(u, old)
	if res, _ := b.json("GET", "/api/auth/me", ""); res.StatusCode != 401 {
		t.Errorf("me with a signed-out cookie = %d, want 401", res.StatusCode)
	}
}

func TestSecureCookieOnHTTPS(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(c *config.Config) { c.BaseURL, _ = url.Parse("https://domaind.example") })
	env.request("POST", "/api/auth/signup", `{"email":"sec@example.com","password":"long-enough-pw"}`)
	w := env.request("POST", "/api/auth/login", `{"email":"sec@example.com","password":"long-enough-pw"}`)
	if !strings.Contains(w.Header().Get("Set-Cookie"), "Secure") {
		t.Errorf("Set-Cookie = %q, want Secure under an https base URL", w.Header().Get("Set-Cookie"))
	}
}

func TestSignUpRefusesBadInput(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := newBrowser(t, env)
	b.signUp("taken@example.com", "first-password")
	tests := []struct {
		name, body string
		want       int
		code       string
	}{
		{"bad email", `{"email":"not-an-email","password":"long-enough-pw"}`, 400, "validation_error"},
		{"no email", `{"password":"long-enough-pw"}`, 400, "validation_error"},
		{"short password", `{"email":"x@example.com","password":"short"}`, 400, "validation_error"},
		{"huge password", `{"email":"x@example.com","password":"` + strings.Repeat("p", 2000) + `"}`, 400, "validation_error"},
		{"not JSON", `email=x`, 400, "bad_request"},
		{"unknown field", `{"email":"x@example.com","password":"long-enough-pw","admin":true}`, 400, "validation_error"},
	}
	for i, tc := range tests {
		r := httptest.NewRequest("POST", "/api/auth/signup", strings.NewReader(tc.body))
		r.Header.Set("Content-Type", "application/json")
		r.RemoteAddr = fmt.Sprintf("198.51.100.%d:1234", i+1) // each under its own sign-up limit
		w := env.do(r)
		if w.Code != tc.want {
			t.Errorf("%s = %d %s, want %d", tc.name, w.Code, w.Body, tc.want)
			continue
		}
		if code, _ := typedError(t, w); code != tc.code {
			t.Errorf("%s code = %q, want %q", tc.name, code, tc.code)
		}
	}
	var n int64
	env.db.Model(&models.User{}).Count(&n)
	if n != 1 {
		t.Errorf("%d users after the refused sign-ups, want 1", n)
	}
}

// Sign-up answers a taken email exactly as a free one, so it tells nobody
// which emails have accounts; the taken account is left as it was.
func TestSignUpDoesNotTellWhichEmailsHaveAccounts(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	newBrowser(t, env).signUp("taken@example.com", "first-password")
	taken := env.request("POST", "/api/auth/signup", `{"email":"TAKEN@example.com","password":"second-password"}`)
	fresh := env.request("POST", "/api/auth/signup", `{"email":"fresh@example.com","password":"second-password"}`)
	if taken.Code != 202 || taken.Code != fresh.Code || taken.Body.String() != fresh.Body.String() ||
		taken.Header().Get("Set-Cookie") != "" || fresh.Header().Get("Set-Cookie") != "" {
		t.Errorf("taken = %d %s, fresh = %d %s; want the same 202 and no session", taken.Code, taken.Body, fresh.Code, fresh.Body)
	}
	if w := env.request("POST", "/api/auth/login", `{"email":"taken@example.com","password":"second-password"}`); w.Code != 401 {
		t.Errorf("the taken account with the second password = %d, want 401 (its password unchanged)", w.Code)
	}
	if w := env.request("POST", "/api/auth/login", `{"email":"taken@example.com","password":"first-password"}`); w.Code != 200 {
		t.Errorf("the taken account with its own password = %d, want 200", w.Code)
	}
	b := newBrowser(t, env)
	for _, email := range []string{"taken@example.com", "free-page@example.com"} {
		res, _ := b.form("/signup", url.Values{"email": {email}, "password": {"long-enough-pw"}, "csrf_token": {b.formToken("/signup")}})
		if loc := res.Header.Get("Location"); res.StatusCode != 303 || !strings.HasPrefix(loc, "/login?signed_up=1") {
			t.Errorf("sign-up page for %s = %d to %q, want the sign-in page", email, res.StatusCode, loc)
		}
	}
}

func TestSignInAnswersAlikeForUnknownEmailAndWrongPassword(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	newBrowser(t, env).signUp("known@example.com", "right-password")
	login := func(body string) (int, string) {
		w := env.request("POST", "/api/auth/login", body)
		return w.Code, w.Body.String()
	}
	code1, body1 := login(`{"email":"known@example.com","password":"wrong-password"}`)
	code2, body2 := login(`{"email":"unknown@example.com","password":"wrong-password"}`)
	if code1 != 401 || code1 != code2 || body1 != body2 {
		t.Errorf("wrong password = %d %s; unknown email = %d %s; want the same 401", code1, body1, code2, body2)
	}
	if code, body := login(`{"email":"KNOWN@example.com","password":"right-password"}`); code != 200 {
		t.Errorf("right password = %d %s", code, body)
	}
	// A body that does not say it is JSON (what a cross-site page can send
	// unasked) signs nobody in.
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded"} {
		r := httptest.NewRequest("POST", "/api/auth/login", strings.NewReader(`{"email":"known@example.com","password":"right-password"}`))
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		if w := env.do(r); w.Code != 400 || w.Header().Get("Set-Cookie") != "" {
			t.Errorf("sign-in with Content-Type %q = %d (cookie %q), want 400 and no session", ct, w.Code, w.Header().Get("Set-Cookie"))
		}
	}
}

// Guessing one account's password is limited per account, from any
// address: past the limit a sign-in is refused unchecked, the right
// password too, except from a browser that signed in to the account
// before (its device cookie), where the owner signs in all the same.
func TestSignInFailuresAreLimitedPerAccount(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	newBrowser(t, env).signUp("target@example.com", "right-password")
	newBrowser(t, env).signUp("other@example.com", "other-password")
	var owners *http.Cookie
	for i := range 2 * signInFailureLimit.Limit {
		w := signInFrom(env, 100+i, "target@example.com", "right-password")
		if w.Code != 200 {
			t.Fatalf("successful sign-in %d = %d, want 200 (successes are not limited per account)", i+1, w.Code)
		}
		owners = deviceCookieOf(t, w)
	}
	others := deviceCookieOf(t, signInFrom(env, 200, "other@example.com", "other-password"))
	for i := range signInFailureLimit.Limit {
		if code := signInFrom(env, i, "target@example.com", "guess").Code; code != 401 {
			t.Fatalf("guess %d = %d, want 401", i+1, code)
		}
	}
	w := signInFrom(env, 50, "target@example.com", "guess")
	wantError(t, "a guess past the account's failures", w, 429, "rate_limited")
	if w.Header().Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After")
	}
	forged := *owners
	forged.Value = strings.Replace(owners.Value, ".", "x.", 1)
	for name, cookie := range map[string]*http.Cookie{"no": nil, "another account's": others, "a forged": &forged} {
		wantError(t, "the right password past the limit with "+name+" device cookie", signInFrom(env, 51, "target@example.com", "right-password", cookie), 429, "rate_limited")
	}
	wantError(t, "a guess from the owner's browser", signInFrom(env, 52, "target@example.com", "guess", owners), 429, "rate_limited")
	for i := range 3 {
		if w := signInFrom(env, 60+i, "target@example.com", "right-password", owners); w.Code != 200 {
			t.Errorf("the owner signing in from their browser while the account is under attack = %d %s, want 200", w.Code, w.Body)
		}
	}
	if w := env.request("POST", "/api/auth/login", `{"email":"other@example.com","password":"whatever-pw"}`); w.Code != 401 {
		t.Errorf("another account = %d, want 401 (its own limit)", w.Code)
	}
}

// deviceCookieOf returns the device cookie w sets.
func deviceCookieOf(t *testing.T, w *httptest.ResponseRecorder) *http.Cookie {
	t.Helper()
	for _, c := range w.Result().Cookies() {
		if c.Name == deviceCookie && c.Value != "" && c.HttpOnly {
			return c
		}
	}
	t.Fatalf("a sign-in (%d) set no device cookie", w.Code)
	return nil
}

// Concurrent guesses cannot all slip under the limit: the unit is spent
// before the password is checked.
func TestConcurrentGuessesAreCountedBeforeTheCheck(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	newBrowser(t, env).signUp("raced@example.com", "right-password")
	codes := make([]int, 2*signInFailureLimit.Limit-1)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Go(func() { codes[i] = signInFrom(env, i, "raced@example.com", "guess").Code })
	}
	wg.Wait()
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	if count[401] != signInFailureLimit.Limit || count[429] != len(codes)-signInFailureLimit.Limit {
		t.Errorf("%d parallel guesses answered %v, want %d × 401 and the rest 429", len(codes), count, signInFailureLimit.Limit)
	}
}

// signInFrom signs in to the JSON endpoint from the i-th test address,
// sending the cookies that are not nil.
func signInFrom(env *testEnv, i int, email, pw string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "/api/auth/login", strings.NewReader(`{"email":"`+email+`","password":"`+pw+`"}`))
	r.Header.Set("Content-Type", "application/json")
	for _, c := range cookies {
		if c != nil {
			r.AddCookie(c)
		}
	}
	r.RemoteAddr = fmt.Sprintf("198.51.%d.%d:1234", i/250, i%250+1) // a new address each time
	return env.do(r)
}

func TestSignInIsLimitedPerAddress(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for i := range signInLimit.Limit {
		if w := env.request("POST", "/api/auth/login", fmt.Sprintf(`{"email":"u%d@example.com","password":"whatever-pw"}`, i)); w.Code != 401 {
			t.Fatalf("attempt %d = %d, want 401", i+1, w.Code)
		}
	}
	w := env.request("POST", "/api/auth/login", `{"email":"late@example.com","password":"whatever-pw"}`)
	if w.Code != 429 || w.Header().Get("Retry-After") == "" {
		t.Errorf("attempt past the address's limit = %d (Retry-After %q), want 429", w.Code, w.Header().Get("Retry-After"))
	}
}

var (
	csrfInput = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)
	onceInput = regexp.MustCompile(`name="once" value="([^"]+)"`)
)

// formFields fetches page and returns the hidden fields its forms that
// make a key or a credential carry: the csrf_token and the form's once.
func (b *browser) formFields(page string) url.Values {
	b.tb.Helper()
	csrf := b.formToken(page)
	_, body := b.do("GET", page, "", "")
	m := onceInput.FindStringSubmatch(body)
	if m == nil {
		b.tb.Fatalf("GET %s: no form with a once token", page)
	}
	return url.Values{"csrf_token": {csrf}, "once": {m[1]}}
}

// formToken fetches page and returns the csrf_token its form carries.
func (b *browser) formToken(page string) string {
	b.tb.Helper()
	res, body := b.do("GET", page, "", "")
	m := csrfInput.FindStringSubmatch(body)
	if res.StatusCode != 200 || m == nil || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		b.tb.Fatalf("GET %s = %d %s, want an HTML form with a csrf_token", page, res.StatusCode, body)
	}
	return m[1]
}

func TestSignInAndSignUpPages(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := newBrowser(t, env)

	tok := b.formToken("/signup")
	res, body := b.form("/signup", url.Values{"email": {"page@example.com"}, "password": {"short"}, "csrf_token": {tok}})
	if res.StatusCode != 400 || !strings.Contains(body, "password must be at least") || !strings.Contains(body, `value="page@example.com"`) {
		t.Errorf("sign-up with a short password = %d, want the form again with the error and the email kept:\n%s", res.StatusCode, body)
	}
	res, _ = b.form("/signup", url.Values{"email": {"page@example.com"}, "password": {"long-enough-pw"}, "csrf_token": {tok}, "next": {"/oauth/authorize?x=1"}})
	signIn := res.Header.Get("Location")
	if res.StatusCode != 303 || signIn != "/login?signed_up=1&next=%2Foauth%2Fauthorize%3Fx%3D1" {
		t.Fatalf("sign-up = %d to %q, want 303 to the sign-in page, next kept", res.StatusCode, signIn)
	}
	res, body = b.do("GET", signIn, "", "")
	if res.StatusCode != 200 || !strings.Contains(body, "sign in with it") || !strings.Contains(body, `value="/oauth/authorize?x=1"`) {
		t.Errorf("sign-in page after sign-up = %d %s, want the notice and next", res.StatusCode, body)
	}
	res, _ = b.form("/login", url.Values{"email": {"page@example.com"}, "password": {"long-enough-pw"}, "csrf_token": {b.formToken("/login")}, "next": {"/oauth/authorize?x=1"}})
	if res.StatusCode != 303 || res.Header.Get("Location") != "/oauth/authorize?x=1" {
		t.Errorf("sign-in = %d to %q, want 303 to next", res.StatusCode, res.Header.Get("Location"))
	}
	res, body = b.do("GET", "/account", "", "")
	if res.StatusCode != 200 || !strings.Contains(body, "page@example.com") {
		t.Errorf("account page = %d %s", res.StatusCode, body)
	}
	accountCSRF := csrfInput.FindStringSubmatch(body)
	if accountCSRF == nil {
		t.Fatal("the account page has no sign-out form token")
	}
	if res, _ := b.form("/logout", url.Values{"csrf_token": {"forged"}}); res.StatusCode != 403 {
		t.Errorf("sign-out with a forged token = %d, want 403", res.StatusCode)
	}
	if res, _ := b.form("/logout", url.Values{"csrf_token": {accountCSRF[1]}}); res.StatusCode != 303 {
		t.Errorf("sign-out = %d, want 303", res.StatusCode)
	}
	if res, _ := b.do("GET", "/account", "", ""); res.StatusCode != 303 || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Errorf("account page after sign-out = %d %q, want a redirect to /login", res.StatusCode, res.Header.Get("Location"))
	}

	tok = b.formToken("/login")
	if res, _ := b.form("/login", url.Values{"email": {"page@example.com"}, "password": {"long-enough-pw"}}); res.StatusCode != 403 {
		t.Errorf("sign-in without the form token = %d, want 403", res.StatusCode)
	}
	res, body = b.form("/login", url.Values{"email": {"page@example.com"}, "password": {"wrong-password"}, "csrf_token": {tok}})
	if res.StatusCode != 401 || !strings.Contains(body, "email or password is wrong") {
		t.Errorf("sign-in with a wrong password = %d %s", res.StatusCode, body)
	}
	for _, next := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", ""} {
		b.client.Jar.SetCookies(mustURL(t, b.base), []*http.Cookie{{Name: sessionCookie, Value: "", MaxAge: -1}})
		res, _ = b.form("/login", url.Values{"email": {"page@example.com"}, "password": {"long-enough-pw"}, "csrf_token": {tok}, "next": {next}})
		if res.StatusCode != 303 || res.Header.Get("Location") != "/account" {
			t.Errorf("sign-in with next %q = %d to %q, want 303 to /account (no open redirect)", next, res.StatusCode, res.Header.Get("Location"))
		}
	}
}

func mustURL(tb testing.TB, s string) *url.URL {
	tb.Helper()
	u, err := url.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}
