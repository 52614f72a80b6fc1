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
// addresses is slowed too). The per-account limit never refuses the right
// password: its owner signs in while someone else guesses.
var (
	signInLimit        = ratelimit.PerMinute("signin", 20)
	signInFailureLimit = ratelimit.Policy{Name: "signin-failures", Kind: ratelimit.Rate, Limit: 10, Window: 15 * time.Minute}
	signUpLimit        = ratelimit.PerMinute("signup", 10)
)

var errTooManyFailures = &fault.Error{Code: fault.RateLimited,
	Message: "too many failed sign-ins for this account; retry after the Retry-After seconds"}

// guessDelay is how long a wrong password for an account past its failure
// limit waits before its answer: guesses slow down, the owner does not.
const guessDelay = time.Second

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
// right password gives the unit back. Past the limit, a right password
// still signs in, and a wrong one is answered 429 after guessDelay. Unknown
// emails are counted like known ones, so the limit tells nothing either.
func (s *Server) authenticate(c *gin.Context, req credentials) (models.User, error) {
	ctx := c.Request.Context()
	var failure ratelimit.Result
	email, err := account.NormaliseEmail(req.Email)
	if err == nil {
		if failure, err = s.svc.Limiter.Allow(ctx, signInFailureLimit, email); err != nil {
			return models.User{}, err
		}
	}
	u, err := s.svc.Accounts.Authenticate(ctx, req.Email, req.Password)
	switch {
	case err == nil && failure.Allowed:
		if err := s.svc.Limiter.Refund(context.WithoutCancel(ctx), signInFailureLimit, email, failure); err != nil {
			s.log.WarnContext(ctx, "sign-in failure unit not given back", "err", err)
		}
	case errors.Is(err, account.ErrInvalidCredentials) && email != "" && !failure.Allowed:
		select {
		case <-time.After(guessDelay):
		case <-ctx.Done():
			return models.User{}, ctx.Err()
		}
		rateHeaders(c, signInFailureLimit, failure)
		return models.User{}, errTooManyFailures
	}
	return u, err
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
