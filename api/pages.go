package api

import (
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/password"
	"github.com/domaind/domaind/internal/requestid"
	"github.com/domaind/domaind/models"
)

// pageFiles are the server-rendered pages for people in a browser, and
// their stylesheet.
//
//go:embed pages/*.html pages/site.css pages/favicon.svg
var pageFiles embed.FS

var pageTemplates = template.Must(template.ParseFS(pageFiles, "pages/*.html"))

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

// pagePolicy is the Content-Security-Policy of the pages: nothing but our
// own stylesheet loads, no script runs, forms post here, and no site may
// frame them (clickjacking).
const pagePolicy = "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// pageTime is how the pages write a time, which must be in UTC.
const pageTime = "2006-01-02 15:04 UTC"

// money writes cents of currency as the pages show an amount, with
// thousands grouped: "1,234.56 USD", "-0.50 USD" (a refund).
func money(currency string, cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	whole := strconv.FormatInt(cents/100, 10)
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	return fmt.Sprintf("%s%s.%02d %s", sign, whole, cents%100, currency)
}

// partnerNames says a partner's name for the ops pages, or its id when
// partners do not have it.
func partnerNames(partners []models.Partner) func(id string) string {
	names := make(map[string]string, len(partners))
	for _, p := range partners {
		names[p.ID] = p.Name
	}
	return func(id string) string { return cmp.Or(names[id], id) }
}

// render writes the page template name with data. Pages carry forms with
// CSRF tokens, so they are never cached.
func (s *Server) render(c *gin.Context, status int, name string, data any) {
	csp := pagePolicy
	if origin := c.GetString(formActionCtxKey); origin != "" {
		csp += " " + origin
	}
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Header("Cache-Control", "no-store")
	c.Header("Content-Security-Policy", csp)
	c.Header("X-Frame-Options", "DENY") // for browsers without frame-ancestors
	c.Status(status)
	if err := pageTemplates.ExecuteTemplate(c.Writer, name, data); err != nil {
		s.log.ErrorContext(c.Request.Context(), "render page", "page", name, "err", err)
	}
}

// siteCSS answers GET /assets/site.css, the pages' stylesheet.
func siteCSS(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=3600")
	c.FileFromFS("pages/site.css", http.FS(pageFiles))
}

// favicon answers GET /favicon.svg, and /favicon.ico, which browsers ask
// for on every site: the service's icon, an SVG either way.
func favicon(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=86400")
	b, _ := pageFiles.ReadFile("pages/favicon.svg") // embedded: always there
	c.Data(http.StatusOK, "image/svg+xml", b)
}

// olderPage is the link of a list page's next (older) page: path with the
// cursor next and the request's filters among keys; "" when there is none.
func olderPage(c *gin.Context, path, next string, keys ...string) string {
	if next == "" {
		return ""
	}
	q := url.Values{"cursor": {next}}
	for _, k := range keys {
		if v := c.Query(k); v != "" {
			q.Set(k, v)
		}
	}
	return path + "?" + q.Encode()
}

// wantsPage says a request is a browser's asking for a page: a GET or HEAD
// outside /api whose Accept names text/html before application/json (or
// without it). Anything else gets the API's JSON.
func wantsPage(c *gin.Context) bool {
	if m := c.Request.Method; (m != http.MethodGet && m != http.MethodHead) || strings.HasPrefix(c.Request.URL.Path, "/api/") {
		return false
	}
	accept := c.GetHeader("Accept")
	html, json := strings.Index(accept, "text/html"), strings.Index(accept, "application/json")
	return html >= 0 && (json < 0 || html < json)
}

// errorPage is what the error page shows.
type errorPage struct {
	Title, Problem, RequestID string
	Status                    int
}

// browsable adapts h as the Responder does, but answers its errors to a
// browser as a page in words (wantsPage), with a way back; API clients
// get the API's error shape as on every route.
func (s *Server) browsable(h func(*gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		err := h(c)
		switch {
		case err == nil:
		case wantsPage(c):
			status, problem := s.formError(c, err)
			s.render(c, status, "error.html", errorPage{Title: errorTitle(status), Problem: problem, Status: status,
				RequestID: requestid.From(c.Request.Context())})
			c.Abort()
		default:
			s.resp.Error(c, err)
		}
	}
}

// errorTitle is the heading of an error page of status.
func errorTitle(status int) string {
	switch {
	case status == http.StatusNotFound:
		return "Page not found"
	case status == http.StatusForbidden || status == http.StatusUnauthorized:
		return "Not allowed"
	case status == http.StatusTooManyRequests:
		return "Too many requests: wait a moment"
	case status >= 500:
		return "Something went wrong on our side"
	}
	return "This request cannot be answered"
}

// safeNext is where to send a browser after signing in: next when it is a
// path on this site, "/account" otherwise (never another site: an open
// redirect would lend our name to phishing). next is judged as the browser
// will read it after http.Redirect has cleaned it: one leading slash, no
// backslash (browsers read "/\x" as "//x"), no control character, no
// scheme or host, and the same again once percent-decoded.
func safeNext(next string) string {
	const home = "/account"
	if next == "" || len(next) > 2000 {
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
	page := signInPage{Title: "Sign in", Next: next, CSRF: s.formCSRF(c)}
	if c.Query("signed_up") != "" {
		page.Notice = signedUpMessage
	}
	s.render(c, http.StatusOK, "signin.html", page)
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
func (s *Server) credentialsForm(c *gin.Context, tmpl string, page signInPage, submit func(email, pw, next string) (string, error)) {
	page.Email, page.Next, page.CSRF = c.PostForm("email"), safeNext(c.PostForm("next")), s.formCSRF(c)
	if !validFormCSRF(c) {
		page.Error = "The form expired. Please try again."
		s.render(c, http.StatusForbidden, tmpl, page)
		return
	}
	to, err := submit(page.Email, c.PostForm("password"), page.Next)
	if err != nil {
		var status int
		status, page.Error = s.formError(c, err)
		s.render(c, status, tmpl, page)
		return
	}
	c.Redirect(http.StatusSeeOther, to)
}

// formError is the status and message a form shows for err, from the same
// table as the JSON errors.
func (s *Server) formError(c *gin.Context, err error) (int, string) {
	e, known := httpjson.Coded(err)
	if !known {
		s.log.ErrorContext(c.Request.Context(), "form failed", "route", c.FullPath(), "err", err)
	}
	return httpjson.Status(e.Code), e.Message
}

// accountPage answers GET /account: who is signed in, their partner
// application (a form to make one, its status, and the sandbox credential
// issued on approval, shown this once), and a way out.
func (s *Server) accountPage(c *gin.Context) {
	if u, ok := s.signedInPerson(c); ok {
		s.renderAccount(c, u, http.StatusOK, "")
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

// renderAccount shows u's account page with status and, after a refused
// form, what went wrong.
func (s *Server) renderAccount(c *gin.Context, u models.User, status int, problem string) {
	page, err := s.accountData(c, u)
	if err != nil {
		s.resp.Error(c, err)
		return
	}
	page.Error = problem
	s.render(c, status, "account.html", page)
}

// accountPageData is what the account page shows.
type accountPageData struct {
	Title, Email, CSRF, Error string
	// Partner is the person's application, nil before they apply.
	Partner *models.Partner
	// KeyID and Secret are the sandbox credential issued on approval, set
	// only the first time the page is shown after it.
	KeyID, Secret string
	BaseURL       string
}

func (s *Server) accountData(c *gin.Context, u models.User) (accountPageData, error) {
	ctx := c.Request.Context()
	page := accountPageData{Title: "Your account", Email: u.Email, CSRF: s.csrfToken(c), BaseURL: s.base()}
	p, err := s.svc.Partners.OwnedBy(ctx, u.ID)
	if e, ok := fault.As(err); ok && e.Code == fault.NotFound {
		return page, nil
	}
	if err != nil {
		return page, err
	}
	page.Partner = &p
	page.KeyID, page.Secret, _, err = s.svc.Partners.RevealCredential(ctx, u.ID)
	return page, err
}

// applySubmit answers the account page's partner application form.
func (s *Server) applySubmit(c *gin.Context) {
	u, ok := s.signedInPerson(c)
	if !ok {
		return
	}
	if !s.validCSRF(c) {
		s.resp.Error(c, errBadCSRF)
		return
	}
	_, err := s.svc.Partners.Apply(c.Request.Context(), u.ID, c.PostForm("name"), cmp.Or(c.PostForm("contact_email"), u.Email))
	if err == nil {
		c.Redirect(http.StatusSeeOther, "/account")
		return
	}
	status, problem := s.formError(c, err)
	s.renderAccount(c, u, status, problem)
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
