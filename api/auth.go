package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/account"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/models"
)

// Sign-in and sign-up limits: attempts per client address, and failed
// sign-ins per account (so that guessing one account's password from many
// addresses is stopped too). Past the per-account limit only a browser
// that signed in to the account before (its device cookie) is checked:
// its owner signs in there while someone else guesses elsewhere.
var (
	signInLimit        = ratelimit.PerMinute("signin", 20)
	signInFailureLimit = ratelimit.Policy{Name: "signin-failures", Kind: ratelimit.Rate, Limit: 10, Window: 15 * time.Minute}
	signUpLimit        = ratelimit.PerMinute("signup", 10)
)

var errTooManyFailures = &fault.Error{Code: fault.RateLimited,
	Message: "too many failed sign-ins for this account; retry after the Retry-After seconds"}

// guessDelay is how long a sign-in refused for the account's failures
// waits before its answer: guesses slow down.
const guessDelay = time.Second

// deviceCookie marks a browser that signed in to an account (OWASP's
// device cookies): a signed deviceClaims, kept deviceLifetime and renewed
// at each sign-in.
const (
	deviceCookie   = "domaind_device"
	deviceLifetime = 180 * 24 * time.Hour
)

// deviceClaims are a device cookie's: the account's user id and the
// cookie's expiry (Unix seconds).
type deviceClaims struct {
	User    string `json:"u"`
	Expires int64  `json:"x"`
}

// deviceUser returns the user id of the request's device cookie, or "".
func (s *Server) deviceUser(c *gin.Context) string {
	raw := s.cookie(c, deviceCookie)
	if raw == "" {
		return ""
	}
	var d deviceClaims
	if s.devices.Open(raw, &d) != nil || s.now().Unix() >= d.Expires {
		return ""
	}
	return d.User
}

// setDevice gives the browser the device cookie of u.
func (s *Server) setDevice(c *gin.Context, u models.User) {
	expires := s.now().Add(deviceLifetime)
	tok, err := s.devices.Sign(deviceClaims{User: u.ID, Expires: expires.Unix()})
	if err != nil { // a string and a number always marshal
		s.log.WarnContext(c.Request.Context(), "device cookie not signed", "err", err)
		return
	}
	s.setCookie(c, deviceCookie, tok, expires)
}

// credentials is the body of sign-up and sign-in. It must say it is JSON
// (decodeJSON): a cross-site page can post a form or a typeless body
// without asking the browser, but not application/json, so a site cannot
// sign a visitor into an account of its choosing (login CSRF).
type credentials struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// userView is a user as the API shows it.
type userView struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"created_at"`
}

// meResponse is the answer of sign-up, sign-in and GET /api/auth/me: who is
// signed in, and the CSRF token to send with unsafe requests.
type meResponse struct {
	User      userView `json:"user"`
	CSRFToken string   `json:"csrf_token"`
}

func (s *Server) me(c *gin.Context, status int) {
	u, _ := currentUser(c)
	c.Header("Cache-Control", "no-store") // a CSRF token
	c.JSON(status, meResponse{User: userView{ID: u.ID, Email: u.Email, CreatedAt: u.CreatedAt.UTC()}, CSRFToken: s.csrfToken(c)})
}

// signUp answers POST /api/auth/signup: creates the account (202).
func (s *Server) signUp(c *gin.Context) error {
	var req credentials
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	if err := s.register(c.Request.Context(), req.Email, req.Password); err != nil {
		return err
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusAccepted, gin.H{"message": signedUpMessage, "sign_in": s.base() + "/api/auth/login"})
	return nil
}

// signedUpMessage is sign-up's one answer to acceptable input.
const signedUpMessage = "If no account used this email, it has one now: sign in with it."

// register creates an account, and answers the same when the email already
// has one, so that sign-up does not tell which emails have accounts (the
// password is hashed either way, so neither does the time it takes). There
// is no mail to send the owner a notice; sign-up therefore never signs in:
// signing in is how a person learns whether the password is theirs.
func (s *Server) register(ctx context.Context, email, pw string) error {
	_, err := s.svc.Accounts.SignUp(ctx, email, pw)
	if errors.Is(err, account.ErrEmailTaken) {
		return nil
	}
	return err
}

// signIn answers POST /api/auth/login.
func (s *Server) signIn(c *gin.Context) error {
	var req credentials
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	u, err := s.authenticate(c, req)
	if err != nil {
		return err
	}
	if err := s.startSession(c, u); err != nil {
		return err
	}
	s.me(c, http.StatusOK)
	return nil
}

// authenticate checks credentials under the per-account limit of
// failures. The failure is counted before the password is verified, in one
// atomic step, so concurrent guesses cannot all slip under the limit; a
// right password gives the unit back, and the browser its device cookie.
// Past the limit, a sign-in from a browser without the account's device
// cookie is answered 429 after guessDelay, its password not checked (a
// right one answered otherwise would tell a guesser it was right); one
// from the owner's browser is checked as before, a wrong password there
// answered the same 429. Unknown emails are counted like known ones, so
// the limit tells nothing either.
func (s *Server) authenticate(c *gin.Context, req credentials) (models.User, error) {
	ctx := c.Request.Context()
	var failure ratelimit.Result
	email, err := account.NormaliseEmail(req.Email)
	if err == nil {
		if failure, err = s.svc.Limiter.Allow(ctx, signInFailureLimit, email); err != nil {
			return models.User{}, err
		}
	}
	refused := email != "" && !failure.Allowed
	device := ""
	if refused {
		if device = s.deviceUser(c); device == "" {
			return models.User{}, s.tooManyFailures(c, failure)
		}
	}
	u, err := s.svc.Accounts.Authenticate(ctx, req.Email, req.Password)
	switch {
	case err == nil && refused && u.ID != device:
		return models.User{}, s.tooManyFailures(c, failure)
	case err == nil:
		if failure.Allowed {
			if err := s.svc.Limiter.Refund(context.WithoutCancel(ctx), signInFailureLimit, email, failure); err != nil {
				s.log.WarnContext(ctx, "sign-in failure unit not given back", "err", err)
			}
		}
		s.setDevice(c, u)
	case errors.Is(err, account.ErrInvalidCredentials) && refused:
		return models.User{}, s.tooManyFailures(c, failure)
	}
	return u, err
}

// tooManyFailures answers a sign-in refused for its account's failures,
// after guessDelay.
func (s *Server) tooManyFailures(c *gin.Context, failure ratelimit.Result) error {
	select {
	case <-time.After(guessDelay):
	case <-c.Request.Context().Done():
		return c.Request.Context().Err()
	}
	rateHeaders(c, signInFailureLimit, failure)
	return errTooManyFailures
}

// signOut answers POST /api/auth/logout: ends the session and clears its cookie.
func (s *Server) signOut(c *gin.Context) error {
	if err := s.svc.Accounts.EndSession(c.Request.Context(), c.GetString(sessionCtxKey)); err != nil {
		return err
	}
	s.setCookie(c, sessionCookie, "", time.Unix(1, 0))
	c.Status(http.StatusNoContent)
	return nil
}

// getMe answers GET /api/auth/me.
func (s *Server) getMe(c *gin.Context) error {
	s.me(c, http.StatusOK)
	return nil
}
