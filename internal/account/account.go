// Package account signs people up and in: users with argon2id password
// hashes, and server-side sessions whose cookie token is stored only as a
// hash. It knows nothing of HTTP; package api puts it behind cookies.
package account

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/lastuse"
	"github.com/domaind/domaind/internal/password"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
)

// SessionTTL is how long a sign-in lasts.
const SessionTTL = 7 * 24 * time.Hour

// Errors of the package, for errors.Is.
var (
	// ErrInvalidCredentials is the one answer to an unknown email and to a
	// wrong password, so that sign-in does not tell which emails exist.
	ErrInvalidCredentials = fault.New(fault.Unauthorized, "email or password is wrong")
	// ErrEmailTaken refuses a second account for an email.
	ErrEmailTaken = fault.New(fault.Conflict, "an account with this email exists; sign in instead")
	// ErrNoSession is a missing, unknown, expired or ended session.
	ErrNoSession = errors.New("account: not signed in")
)

// Service is the accounts and sessions of one database.
type Service struct {
	db     *gorm.DB
	params password.Params
	now    func() time.Time
	// dummyHash is verified when an email is unknown, so that an unknown
	// email costs as long as a wrong password.
	dummyHash string
	// uses records when each developer key was last used.
	uses *lastuse.Recorder
}

// New returns a Service on db hashing with params; now is its clock.
func New(db *gorm.DB, params password.Params, now func() time.Time) *Service {
	s := &Service{db: db, params: params, now: now, dummyHash: password.Hash("no account has this password", params)}
	s.uses = lastuse.New(db, &models.APIKey{}, "id", func() time.Time { return s.now() })
	return s
}

// NormaliseEmail trims and lower-cases an email address and checks that it
// is one bare address (no display name, no list).
func NormaliseEmail(raw string) (string, error) {
	email := strings.ToLower(strings.TrimSpace(raw))
	if email == "" {
		return "", fault.Invalid("email", "is required")
	}
	if len(email) > 254 {
		return "", fault.Invalid("email", "is longer than 254 characters")
	}
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || a.Name != "" {
		return "", fault.Invalid("email", "is not an email address")
	}
	local, domain, _ := strings.Cut(email, "@")
	if len(local) > 64 || !strings.Contains(domain, ".") || strings.HasPrefix(domain, "[") {
		return "", fault.Invalid("email", "is not an email address")
	}
	return email, nil
}

func checkPassword(pw string) error {
	switch {
	case len(pw) < password.MinLength:
		return fault.Invalid("password", "must be at least %d characters", password.MinLength)
	case len(pw) > password.MaxLength:
		return fault.Invalid("password", "must be at most %d bytes", password.MaxLength)
	}
	return nil
}

// SignUp creates an account.
func (s *Service) SignUp(ctx context.Context, email, pw string) (models.User, error) {
	email, err := NormaliseEmail(email)
	if err != nil {
		return models.User{}, err
	}
	if err := checkPassword(pw); err != nil {
		return models.User{}, err
	}
	u := models.User{ID: models.NewID(), Email: email, PasswordHash: password.Hash(pw, s.params), CreatedAt: s.now().UTC()}
	err = s.db.WithContext(ctx).Create(&u).Error
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return models.User{}, ErrEmailTaken
	}
	if err != nil {
		return models.User{}, fmt.Errorf("create user: %w", err)
	}
	return u, nil
}

// Authenticate returns the user whose email and password these are, or
// ErrInvalidCredentials.
func (s *Service) Authenticate(ctx context.Context, email, pw string) (models.User, error) {
	email, err := NormaliseEmail(email)
	if err != nil || len(pw) > password.MaxLength {
		return models.User{}, ErrInvalidCredentials
	}
	var u models.User
	err = s.db.WithContext(ctx).Where("email = ?", email).Take(&u).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		password.Verify(pw, s.dummyHash) // the same work as for a wrong password
		return models.User{}, ErrInvalidCredentials
	case err != nil:
		return models.User{}, fmt.Errorf("find user: %w", err)
	}
	if err := password.Verify(pw, u.PasswordHash); err != nil {
		if !errors.Is(err, password.ErrMismatch) {
			return models.User{}, fmt.Errorf("verify password of %s: %w", u.ID, err)
		}
		return models.User{}, ErrInvalidCredentials
	}
	return u, nil
}

// StartSession signs u in and returns the token for the cookie and when it expires.
func (s *Service) StartSession(ctx context.Context, u models.User) (token string, expires time.Time, err error) {
	token = secret.New()
	now := s.now().UTC()
	sess := models.Session{TokenHash: secret.Hash(token), UserID: u.ID, ExpiresAt: now.Add(SessionTTL), CreatedAt: now}
	if err := s.db.WithContext(ctx).Create(&sess).Error; err != nil {
		return "", time.Time{}, fmt.Errorf("create session: %w", err)
	}
	return token, sess.ExpiresAt, nil
}

// SessionUser returns the user signed in with token, or ErrNoSession.
func (s *Service) SessionUser(ctx context.Context, token string) (models.User, error) {
	if token == "" || len(token) > 100 {
		return models.User{}, ErrNoSession
	}
	var u models.User
	err := s.db.WithContext(ctx).
		Joins("JOIN sessions ON sessions.user_id = users.id").
		Where("sessions.token_hash = ? AND sessions.expires_at > ?", secret.Hash(token), s.now().UTC()).
		Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return models.User{}, ErrNoSession
	}
	if err != nil {
		return models.User{}, fmt.Errorf("find session: %w", err)
	}
	return u, nil
}

// EndSession signs the session of token out; an unknown token is no error.
func (s *Service) EndSession(ctx context.Context, token string) error {
	if err := s.db.WithContext(ctx).Where("token_hash = ?", secret.Hash(token)).Delete(&models.Session{}).Error; err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}
