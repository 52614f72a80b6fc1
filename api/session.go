package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/account"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
)

// Cookies of a browser: the session, and the double-submit CSRF token of
// the sign-in and sign-up forms (which are filled in before any session).
const (
	sessionCookie  = "domaind_session"
	formCSRFCookie = "domaind_csrf"
)

// HeaderCSRFToken carries a JSON client's CSRF token; forms send the field
// csrf_token instead.
const HeaderCSRFToken = "X-CSRF-Token"

// userCtxKey and sessionCtxKey hold the signed-in user and its session
// token, set by withSession.
const (
	userCtxKey    = "domaind.user"
	sessionCtxKey = "domaind.session"
)

var errNotSignedIn = &fault.Error{Code: fault.Unauthorized, Message: "sign in first"}

var errBadCSRF = &fault.Error{Code: fault.CSRFFailed, Message: "missing or wrong CSRF token: send the csrf_token of GET /api/auth/me as " + HeaderCSRFToken}

// withSession makes the request's signed-in user, if any, known to the
// handlers (currentUser). It never refuses a request.
func (s *Server) withSession(c *gin.Context) {
	if tok := s.cookie(c, sessionCookie); tok != "" {
		u, err := s.svc.Accounts.SessionUser(c.Request.Context(), tok)
		switch {
		case err == nil:
			c.Set(userCtxKey, u)
			c.Set(sessionCtxKey, tok)
		case !errors.Is(err, account.ErrNoSession):
			s.resp.Error(c, err)
			return
		}
	}
	c.Next()
}

// requireSession refuses a request without a signed-in user (401), and an
// unsafe one (anything but GET, HEAD, OPTIONS) without the session's CSRF
// token (403). The cookie is SameSite=Lax, and the token stops what Lax
// lets through. It runs after withSession.
func (s *Server) requireSession(c *gin.Context) {
	if _, ok := currentUser(c); !ok {
		s.resp.Error(c, errNotSignedIn)
		return
	}
	if !safeMethod(c.Request.Method) && !s.validCSRF(c) {
		s.resp.Error(c, errBadCSRF)
		return
	}
	c.Next()
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// currentUser is the signed-in user of the request.
func currentUser(c *gin.Context) (models.User, bool) {
	u, ok := c.Get(userCtxKey)
	if !ok {
		return models.User{}, false
	}
	return u.(models.User), true
}

// csrfToken is the CSRF token of the request's session ("" without one):
// an HMAC of the session token under the secret key, so it needs no
// storage, dies with the session and cannot be made without the key.
func (s *Server) csrfToken(c *gin.Context) string {
	tok := c.GetString(sessionCtxKey)
	if tok == "" {
		return ""
	}
	mac := hmac.New(sha256.New, s.cfg.SecretKey)
	mac.Write([]byte("csrf\x00" + tok))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// validCSRF reports whether the request carries its session's CSRF token,
// in the header or as the form field csrf_token.
func (s *Server) validCSRF(c *gin.Context) bool {
	want := s.csrfToken(c)
	got := c.GetHeader(HeaderCSRFToken)
	if got == "" {
		got = c.PostForm("csrf_token")
	}
	return want != "" && hmac.Equal([]byte(got), []byte(want))
}

// formCSRF returns the double-submit token of the sign-in and sign-up
// forms, setting its cookie when the browser has none yet.
func (s *Server) formCSRF(c *gin.Context) string {
	if v := s.cookie(c, formCSRFCookie); len(v) == 43 {
		return v
	}
	v := secret.New()
	s.setCookie(c, formCSRFCookie, v, time.Time{})
	return v
}

// validFormCSRF reports whether a posted form carries its cookie's token.
func (s *Server) validFormCSRF(c *gin.Context) bool {
	cookie := s.cookie(c, formCSRFCookie)
	return cookie != "" && hmac.Equal([]byte(cookie), []byte(c.PostForm("csrf_token")))
}

// startSession signs u in: a new session and its cookie, ending the
// browser's previous session if it had one.
func (s *Server) startSession(c *gin.Context, u models.User) error {
	if old := s.cookie(c, sessionCookie); old != "" {
		if err := s.svc.Accounts.EndSession(c.Request.Context(), old); err != nil {
			return err
		}
	}
	tok, expires, err := s.svc.Accounts.StartSession(c.Request.Context(), u)
	if err != nil {
		return err
	}
	s.setCookie(c, sessionCookie, tok, expires)
	c.Set(userCtxKey, u)
	c.Set(sessionCtxKey, tok)
	return nil
}

// setCookie sets an HttpOnly, SameSite=Lax cookie for the whole site,
// Secure when the service is served over https (and then named with the
// __Host- prefix: cookieName). A zero expires makes a cookie that lasts
// the browser session; a past one deletes it.
func (s *Server) setCookie(c *gin.Context, name, value string, expires time.Time) {
	ck := &http.Cookie{
		Name: s.cookieName(name), Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: s.servedOverHTTPS(),
	}
	if !expires.IsZero() {
		ck.Expires = expires
		if ck.MaxAge = int(expires.Sub(s.now()).Seconds()); ck.MaxAge <= 0 {
			ck.MaxAge = -1
		}
	}
	http.SetCookie(c.Writer, ck)
}

// servedOverHTTPS says the service's base URL is https.
func (s *Server) servedOverHTTPS() bool { return s.cfg.BaseURL.Scheme == "https" }

// cookieName is the name the browser keeps the cookie name under: with
// the __Host- prefix over https (page.CookieName).
func (s *Server) cookieName(name string) string { return page.CookieName(name, s.servedOverHTTPS()) }

// cookie is the value of the request's cookie name, "" without one.
func (s *Server) cookie(c *gin.Context, name string) string {
	v, _ := c.Cookie(s.cookieName(name))
	return v
}
