package account

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/password"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

var cheap = password.Params{MemoryKiB: 64, Time: 1, Threads: 1}

func newService(tb testing.TB, now *time.Time) *Service {
	tb.Helper()
	return New(modelstest.NewDB(tb), cheap, func() time.Time { return *now })
}

func TestNormaliseEmail(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"  Demo@Domaind.TEST ", "demo@domaind.test"},
		{"a.b+tag@example.co.uk", "a.b+tag@example.co.uk"},
	} {
		if got, err := NormaliseEmail(tc.in); err != nil || got != tc.want {
			t.Errorf("NormaliseEmail(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "plain", "a@b", "Name <a@example.com>", "a@example.com, b@example.com",
		"@example.com", "a@[127.0.0.1]", string(make([]byte, 300))} {
		var ve *ValidationError
		if _, err := NormaliseEmail(bad); !errors.As(err, &ve) || ve.Field != "email" {
			t.Errorf("NormaliseEmail(%q) = %v, want a validation error on email", bad, err)
		}
	}
}

func TestSignUpAndAuthenticate(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := newService(t, &now)
	ctx := context.Background()
	u, err := s.SignUp(ctx, " Ada@Example.com", "analytical-engine")
	if err != nil {
		t.Fatal(err)
	}
	if u.Email != "ada@example.com" || u.PasswordHash == "" || u.PasswordHash == "analytical-engine" {
		t.Fatalf("user = %+v", u)
	}
	if _, err := s.SignUp(ctx, "ADA@example.com", "another-password"); !errors.Is(err, ErrEmailTaken) {
		t.Errorf("second sign-up with the same email = %v, want ErrEmailTaken", err)
	}
	var ve *ValidationError
	if _, err := s.SignUp(ctx, "bob@example.com", "short"); !errors.As(err, &ve) || ve.Field != "password" {
		t.Errorf("short password = %v, want a validation error on password", err)
	}

	got, err := s.Authenticate(ctx, "ada@EXAMPLE.com", "analytical-engine")
	if err != nil || got.ID != u.ID {
		t.Errorf("Authenticate = %+v, %v; want %s", got, err, u.ID)
	}
	for _, tc := range []struct{ email, pw string }{
		{"ada@example.com", "analytical-enginE"},
		{"nobody@example.com", "analytical-engine"},
		{"not an email", "analytical-engine"},
	} {
		if _, err := s.Authenticate(ctx, tc.email, tc.pw); !errors.Is(err, ErrInvalidCredentials) {
			t.Errorf("Authenticate(%q, %q) = %v, want ErrInvalidCredentials", tc.email, tc.pw, err)
		}
	}
}

func TestSessions(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := newService(t, &now)
	ctx := context.Background()
	u, err := s.SignUp(ctx, "grace@example.com", "compiler-first")
	if err != nil {
		t.Fatal(err)
	}
	token, expires, err := s.StartSession(ctx, u)
	if err != nil || !expires.Equal(now.Add(SessionTTL)) {
		t.Fatalf("StartSession = %v, %v", expires, err)
	}
	var stored models.Session
	if err := s.db.First(&stored).Error; err != nil || stored.TokenHash == token || len(stored.TokenHash) != 64 {
		t.Fatalf("stored session %+v (%v): want only the token's hash", stored, err)
	}
	if got, err := s.SessionUser(ctx, token); err != nil || got.ID != u.ID {
		t.Errorf("SessionUser = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "not-a-session", token + "x"} {
		if _, err := s.SessionUser(ctx, bad); !errors.Is(err, ErrNoSession) {
			t.Errorf("SessionUser(%q) = %v, want ErrNoSession", bad, err)
		}
	}

	now = now.Add(SessionTTL)
	if _, err := s.SessionUser(ctx, token); !errors.Is(err, ErrNoSession) {
		t.Errorf("expired session = %v, want ErrNoSession", err)
	}
	now = now.Add(-time.Hour)
	if err := s.EndSession(ctx, token); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SessionUser(ctx, token); !errors.Is(err, ErrNoSession) {
		t.Errorf("ended session = %v, want ErrNoSession", err)
	}
}
