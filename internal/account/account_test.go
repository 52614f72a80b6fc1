package account

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fault"
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
		var ve *fault.Error
		if _, err := NormaliseEmail(bad); !errors.As(err, &ve) || ve.Field != "email" {
			t.Errorf("NormaliseEmail(%q) = %v, want a validation error on email", bad, err)
		}
	}
}

func TestSignUpAndAuthenticate(t *testing.T) {
	t.Parallel()
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
	var ve *fault.Error
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
	t.Parallel()
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

func TestDeveloperKeys(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := newService(t, &now)
	ctx := context.Background()
	alice, _ := s.SignUp(ctx, "alice@example.com", "alice-password")
	bob, _ := s.SignUp(ctx, "bob@example.com", "bob-password-1")

	k, err := s.CreateKey(ctx, alice, " ci ")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(k.ID, "dk_") || !strings.HasPrefix(k.Secret, "dks_") || k.Name != "ci" || k.SecretHash == k.Secret {
		t.Fatalf("key = %+v", k)
	}
	var stored models.APIKey
	s.db.Take(&stored, "id = ?", k.ID)
	if stored.SecretHash == "" || strings.Contains(stored.SecretHash, k.Secret) {
		t.Fatalf("stored key %+v keeps the secret", stored)
	}
	if got, err := s.KeyOwner(ctx, k.ID, k.Secret); err != nil || got.UserID != alice.ID {
		t.Errorf("KeyOwner = %+v, %v", got, err)
	}
	for _, tc := range []struct{ id, secret string }{
		{k.ID, k.Secret + "x"}, {k.ID, ""}, {"dk_unknown", k.Secret}, {"", ""},
	} {
		if _, err := s.KeyOwner(ctx, tc.id, tc.secret); !errors.Is(err, ErrBadKey) {
			t.Errorf("KeyOwner(%q, %q) = %v, want ErrBadKey", tc.id, tc.secret, err)
		}
	}

	if err := s.RevokeKey(ctx, bob, k.ID); !errors.Is(err, ErrKeyNotFound) {
		t.Errorf("bob revoking alice's key = %v, want ErrKeyNotFound", err)
	}
	if keys, _ := s.Keys(ctx, bob); len(keys) != 0 {
		t.Errorf("bob sees %d keys, want none", len(keys))
	}
	if err := s.RevokeKey(ctx, alice, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.KeyOwner(ctx, k.ID, k.Secret); !errors.Is(err, ErrBadKey) {
		t.Errorf("a revoked key = %v, want ErrBadKey", err)
	}
	if err := s.RevokeKey(ctx, alice, k.ID); !errors.Is(err, ErrKeyNotFound) {
		t.Errorf("revoking twice = %v, want ErrKeyNotFound", err)
	}

	for i := range MaxKeys {
		if _, err := s.CreateKey(ctx, alice, fmt.Sprint("k", i)); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
	}
	if _, err := s.CreateKey(ctx, alice, "one too many"); !errors.Is(err, ErrTooManyKeys) {
		t.Errorf("key past the limit = %v, want ErrTooManyKeys", err)
	}
	if keys, _ := s.Keys(ctx, alice); len(keys) != MaxKeys {
		t.Errorf("alice lists %d keys, want %d live ones (the revoked one hidden)", len(keys), MaxKeys)
	}
}
