package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/account"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/idempotency"
	"github.com/domaind/domaind/internal/oauth"
	"github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/internal/password"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/models"
)

// signInPage is what the sign-in and sign-up pages show.
type signInPage struct {
	Title       string
	Notice      string
	Error       string
	Email       string
	Next        string
	CSRF        string
	MinPassword int
}

// formActionCtxKey holds an origin a page's form may lead to besides this
// site (the consent form ends at the client's redirect URI).
const formActionCtxKey = "domaind.form_action"

// render writes the page template name with data (package page).
func (s *Server) render(c *gin.Context, status int, name string, data any) {
	if err := page.Render(c.Writer, status, name, data, c.GetString(formActionCtxKey)); err != nil {
		s.log.ErrorContext(c.Request.Context(), "render page", "page", name, "err", err)
	}
}

// browsable adapts h as the Responder does, but answers its errors to a
// browser as a page in words (page.Wanted), with a way back; API clients
// get the API's error shape as on every route.
func (s *Server) browsable(h func(*gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			s.browsableError(c, err)
		}
	}
}

// browsableError answers err as browsable does: a page to a browser, the
// API's error shape to anyone else.
func (s *Server) browsableError(c *gin.Context, err error) {
	if !page.Wanted(c.Request) {
		s.resp.Error(c, err)
		return
	}
	status, problem := s.formError(c, err)
	s.render(c, status, "error.html", page.NewError(c.Request, status, problem))
	c.Abort()
}

// maxNext bounds safeNext's next. The longest next of ours is an
// authorization request (authorizeNext): its redirect URI and state, every
// byte percent-encoded at worst, and the rest, which takes 211 bytes and
// three times the resource's length (the base URL and "/api"), within the
// 1 KiB added for a base URL of up to 250 bytes. Carried in /login's
// query it is encoded once more, to under 15 KB, well within the server's
// 64 KiB of request header.
const maxNext = 3*(oauth.MaxRedirectURILen+oauth.MaxStateLen) + 1<<10

// safeNext is where to send a browser after signing in: next when it is a
// path on this site, "/account" otherwise (never another site: an open
// redirect would lend our name to phishing). next is judged as the browser
// will read it after http.Redirect has cleaned it: one leading slash, no
// backslash (browsers read "/\x" as "//x"), no control character, no
// scheme or host, and the same again once percent-decoded.
func safeNext(next string) string {
	const home = "/account"
	if next == "" || len(next) > maxNext {
		return home
	}
	p, query, hasQuery := strings.Cut(next, "?")
	if !localPath(p) {
		return home
	}
	// The cleaning http.Redirect applies to a local path, trailing slash kept.
	cleaned := path.Clean(p)
	if strings.HasSuffix(p, "/") && cleaned != "/" {
		cleaned += "/"
	}
	decoded, err := url.PathUnescape(cleaned)
	if err != nil || !localPath(cleaned) || !localPath(decoded) || strings.ContainsFunc(query, unsafeInURL) {
		return home
	}
	if hasQuery {
		cleaned += "?" + query
	}
	if u, err := url.Parse(cleaned); err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return home
	}
	return cleaned
}

// localPath reports whether p is a path a browser resolves on this site:
// one leading slash and nothing a browser reads as the start of a host.
func localPath(p string) bool {
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") && !strings.ContainsFunc(p, unsafeInURL)
}

// unsafeInURL is a character no redirect target of ours holds: a backslash
// (browsers treat it as a slash) or a control character (browsers drop tabs
// and newlines, so "/\t/x" becomes "//x").
func unsafeInURL(r rune) bool { return r == '\\' || unicode.IsControl(r) }

// signInForm answers GET /login.
func (s *Server) signInForm(c *gin.Context) {
	next := safeNext(c.Query("next"))
	if _, ok := currentUser(c); ok {
		c.Redirect(http.StatusSeeOther, next)
		return
	}
	view := signInPage{Title: "Sign in", Next: next, CSRF: s.formCSRF(c)}
	if c.Query("signed_up") != "" {
		view.Notice = signedUpMessage
	}
	s.render(c, http.StatusOK, "signin.html", view)
}

// signUpForm answers GET /signup.
func (s *Server) signUpForm(c *gin.Context) {
	next := safeNext(c.Query("next"))
	if _, ok := currentUser(c); ok {
		c.Redirect(http.StatusSeeOther, next)
		return
	}
	s.render(c, http.StatusOK, "signup.html", signInPage{Title: "Sign up", Next: next, CSRF: s.formCSRF(c), MinPassword: password.MinLength})
}

// signInSubmit answers POST /login from the sign-in form.
func (s *Server) signInSubmit(c *gin.Context) {
	s.credentialsForm(c, "signin.html", signInPage{Title: "Sign in"}, func(email, pw, next string) (string, error) {
		u, err := s.authenticate(c, credentials{Email: email, Password: pw})
		if err == nil {
			err = s.startSession(c, u)
		}
		return next, err
	})
}

// signUpSubmit answers POST /signup from the sign-up form: the sign-in
// page follows, with the same words whether or not the email was free
// (signUp says why).
func (s *Server) signUpSubmit(c *gin.Context) {
	s.credentialsForm(c, "signup.html", signInPage{Title: "Sign up", MinPassword: password.MinLength}, func(email, pw, next string) (string, error) {
		return "/login?signed_up=1&next=" + url.QueryEscape(next), s.register(c.Request.Context(), email, pw)
	})
}

// credentialsForm handles a posted sign-in or sign-up form: check its
// CSRF token, submit the credentials and go where submit says, or show the
// form again with what went wrong.
func (s *Server) credentialsForm(c *gin.Context, tmpl string, view signInPage, submit func(email, pw, next string) (string, error)) {
	view.Email, view.Next, view.CSRF = c.PostForm("email"), safeNext(c.PostForm("next")), s.formCSRF(c)
	if !s.validFormCSRF(c) {
		view.Error = "The form expired. Please try again."
		s.render(c, http.StatusForbidden, tmpl, view)
		return
	}
	to, err := submit(view.Email, c.PostForm("password"), view.Next)
	if err != nil {
		var status int
		status, view.Error = s.formError(c, err)
		s.render(c, status, tmpl, view)
		return
	}
	c.Redirect(http.StatusSeeOther, to)
}

// formError is the status and message a form shows for err, from the same
// table as the JSON errors.
func (s *Server) formError(c *gin.Context, err error) (int, string) {
	status, words, known := page.Problem(err)
	if !known {
		s.log.ErrorContext(c.Request.Context(), "form failed", "route", c.FullPath(), "err", err)
	}
	return status, words
}

// accountPage answers GET /account: who is signed in, their developer
// keys, the apps they allowed through OAuth, their partner application
// (a form to make one, its status, the sandbox credential issued on
// approval, shown this once, and once approved its credentials and
// webhooks), and a way out.
func (s *Server) accountPage(c *gin.Context) {
	if u, ok := s.signedInPerson(c); ok {
		s.renderAccount(c, u, http.StatusOK, nil)
	}
}

// signedInPerson is who is signed in; without anyone, it sends the browser
// to sign in and come back to the account page.
func (s *Server) signedInPerson(c *gin.Context) (models.User, bool) {
	u, ok := currentUser(c)
	if !ok {
		c.Redirect(http.StatusSeeOther, "/login?next=%2Faccount")
	}
	return u, ok
}

// renderAccount shows u's account page with status, and what show adds
// to it (nil for nothing).
func (s *Server) renderAccount(c *gin.Context, u models.User, status int, show func(*accountPageData)) {
	view, err := s.accountData(c, u)
	if err != nil {
		s.resp.Error(c, err)
		return
	}
	if show != nil {
		show(&view)
	}
	s.render(c, status, "account.html", view)
}

// accountForm adapts the handler of a form of the account page: the
// person must be signed in (else off to sign in) and the form carry the
// session's CSRF token. submit does the form's work: a refusal shows on
// the page with its status; a nil show goes back to the page (303), else
// the page answers 201 with what show adds (a secret shown once).
func (s *Server) accountForm(submit func(c *gin.Context, u models.User) (show func(*accountPageData), err error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		u, ok := s.signedInPerson(c)
		if !ok {
			return
		}
		if !s.validCSRF(c) {
			s.resp.Error(c, errBadCSRF)
			return
		}
		show, err := submit(c, u)
		switch {
		case err != nil:
			status, problem := s.formError(c, err)
			s.renderAccount(c, u, status, func(v *accountPageData) { v.Error = problem })
		case show == nil:
			c.Redirect(http.StatusSeeOther, "/account")
		default:
			s.renderAccount(c, u, http.StatusCreated, show)
		}
	}
}

// accountPageData is what the account page shows.
type accountPageData struct {
	Title, Email, CSRF, Error string
	// Notice says what a form just did.
	Notice string
	// Once is the token of the forms that make a key or a credential,
	// which a resend of the same form does not make again.
	Once string
	// Partner is the person's application, nil before they apply;
	// PartnerPart its credentials and webhooks once approved.
	Partner     *models.Partner
	PartnerPart *accountPartner
	// KeyID and Secret are the sandbox credential issued on approval, set
	// only the first time the page is shown after it; CredentialUnreadable
	// says it cannot be opened (sealed under another secret key).
	KeyID, Secret        string
	CredentialUnreadable bool
	BaseURL              string
	// Keys are the person's developer keys; NewKey one just created, its
	// secret shown this once.
	Keys     []accountKeyRow
	NewKey   *account.NewKey
	MaxKeys  int
	KeyLimit string
	// Apps are the OAuth clients the person allowed, still able to take
	// tokens.
	Apps []accountAppRow
}

// accountAppRow is an OAuth client the person allowed, with its times.
type accountAppRow struct {
	ClientID, ClientName, Scope, Since, LastUsed, Ends string
}

// accountKeyRow is a developer key on the account page, with what is
// left of its rate limit.
type accountKeyRow struct {
	ID, Name, Created, LastUsed string
	// Left is the requests left in the key's current minute, "" when the
	// limiter cannot say.
	Left string
}

func (s *Server) accountData(c *gin.Context, u models.User) (accountPageData, error) {
	ctx := c.Request.Context()
	view := accountPageData{Title: "Your account", Email: u.Email, CSRF: s.csrfToken(c), Once: idempotency.FormToken(), BaseURL: s.base(),
		MaxKeys: account.MaxKeys, KeyLimit: fmt.Sprintf("%d requests a minute", keyLimit.Limit)}
	keys, err := s.svc.Accounts.Keys(ctx, u)
	if err != nil {
		return view, err
	}
	limits := make([]ratelimit.Check, len(keys))
	for i, k := range keys {
		limits[i] = ratelimit.Check{Policy: keyLimit, Client: k.ID}
	}
	// Without the limits' status, the page says nothing of what is left.
	left, leftErr := s.svc.Limiter.StatusAll(ctx, limits...)
	for i, k := range keys {
		row := accountKeyRow{ID: k.ID, Name: k.Name, Created: k.CreatedAt.UTC().Format(page.Time)}
		if k.LastUsedAt != nil {
			row.LastUsed = k.LastUsedAt.UTC().Format(page.Time)
		}
		if leftErr == nil {
			row.Left = fmt.Sprintf("%d of %d left this minute", left[i].Remaining, left[i].Limit)
		}
		view.Keys = append(view.Keys, row)
	}
	apps, err := s.svc.OAuth.Allowed(ctx, u.ID)
	if err != nil {
		return view, err
	}
	at := func(t time.Time) string { return t.UTC().Format(page.Time) }
	for _, a := range apps {
		view.Apps = append(view.Apps, accountAppRow{ClientID: a.ClientID, ClientName: a.ClientName, Scope: a.Scope,
			Since: at(a.Since), LastUsed: at(a.LastUsed), Ends: at(a.Ends)})
	}
	p, err := s.svc.Partners.OwnedBy(ctx, u.ID)
	if e, ok := fault.As(err); ok && e.Code == fault.NotFound {
		return view, nil
	}
	if err != nil {
		return view, err
	}
	view.Partner = &p
	if p.Status == models.PartnerApproved {
		if view.PartnerPart, err = s.partnerPart(ctx, p); err != nil {
			return view, err
		}
	}
	view.KeyID, view.Secret, _, err = s.svc.Partners.RevealCredential(ctx, p)
	if errors.Is(err, partner.ErrCredentialUnreadable) {
		// The page leads to the person's keys and apps too: it is shown,
		// saying why the credential is not.
		s.log.ErrorContext(ctx, "a partner's credential cannot be shown", "partner", p.ID, "err", err)
		view.CredentialUnreadable = true
		return view, nil
	}
	return view, err
}

// keySubmit answers the account page's developer key forms: create
// shows the page with the new key's secret, this once (a resend of the
// form makes no second key: it shows the first's, for a short while);
// revoke goes back to the page.
func (s *Server) keySubmit(c *gin.Context, u models.User) (func(*accountPageData), error) {
	ctx := c.Request.Context()
	if id := c.Param("id"); id != "" {
		return nil, s.svc.Accounts.RevokeKey(ctx, u, id)
	}
	k, err := formOnce(s, c, u, func(ctx context.Context) (account.NewKey, error) {
		return s.svc.Accounts.CreateKey(ctx, u, c.PostForm("name"))
	})
	return func(v *accountPageData) { v.NewKey = &k }, err
}

// formOnce runs do for an account page's form that makes a key or a
// credential once, a resend answered with its result (idempotency.Once).
func formOnce[T any](s *Server, c *gin.Context, u models.User, do func(context.Context) (T, error)) (T, error) {
	return idempotency.Once(c.Request.Context(), s.svc.Idempotency, "user:"+u.ID, c.PostForm(idempotency.FormField), do)
}

// appSubmit answers the account page's form that ends an app's access:
// back to the page.
func (s *Server) appSubmit(c *gin.Context, u models.User) (func(*accountPageData), error) {
	return nil, s.svc.OAuth.Disallow(c.Request.Context(), u.ID, c.Param("client_id"))
}

// applySubmit answers the account page's partner application form.
func (s *Server) applySubmit(c *gin.Context, u models.User) (func(*accountPageData), error) {
	_, err := s.svc.Partners.Apply(c.Request.Context(), u.ID, c.PostForm("name"), cmp.Or(c.PostForm("contact_email"), u.Email))
	return nil, err
}

// signOutSubmit answers POST /logout from the account page's form.
func (s *Server) signOutSubmit(c *gin.Context) {
	if _, ok := currentUser(c); ok {
		if !s.validCSRF(c) {
			s.resp.Error(c, errBadCSRF)
			return
		}
		if err := s.svc.Accounts.EndSession(c.Request.Context(), c.GetString(sessionCtxKey)); err != nil {
			s.resp.Error(c, err)
			return
		}
	}
	s.setCookie(c, sessionCookie, "", time.Unix(1, 0))
	c.Redirect(http.StatusSeeOther, "/login")
}
