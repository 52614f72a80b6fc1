package partner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

func newService(t *testing.T) *Service {
	t.Helper()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	return New(modelstest.NewDB(t), []byte("test-secret-key-0123456789abcdef"), func() time.Time { return now })
}

func codeOf(err error) fault.Code {
	if e, ok := fault.As(err); ok {
		return e.Code
	}
	return ""
}

// A person applies once: of eight applications sent at the same moment,
// one is taken and the others are conflicts.
func TestOneApplicationPerPersonUnderConcurrency(t *testing.T) {
	t.Parallel()
	s := newService(t)
	var mu sync.Mutex
	taken, refused := 0, 0
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			_, err := s.Apply(context.Background(), "user-1", fmt.Sprintf("Side Project %d", i), "me@example.com")
			mu.Lock()
			defer mu.Unlock()
			switch codeOf(err) {
			case "":
				if err == nil {
					taken++
					return
				}
				t.Errorf("Apply: %v", err)
			case fault.Conflict:
				refused++
			default:
				t.Errorf("Apply: %v", err)
			}
		})
	}
	wg.Wait()
	var n int64
	s.db.Model(&models.Partner{}).Where("owner_user_id = ?", "user-1").Count(&n)
	if taken != 1 || refused != 7 || n != 1 {
		t.Errorf("%d taken, %d refused, %d applications stored; want 1, 7 and 1", taken, refused, n)
	}
}

// A partner holds at most MaxCredentials live credentials per
// environment, however many are asked for at once; a revoked one frees
// its place, and the other environment counts its own.
func TestCredentialsAreCappedPerEnvironment(t *testing.T) {
	t.Parallel()
	s := newService(t)
	ctx := context.Background()
	p, err := s.Create(ctx, "Many Keys", "keys@example.com")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, MaxCredentials+5)
	for range cap(errs) {
		go func() {
			_, err := s.IssueCredential(ctx, p.ID, models.EnvSandbox, []string{ScopeSearch})
			errs <- err
		}()
	}
	var issued, refused int
	for range cap(errs) {
		switch err := <-errs; {
		case err == nil:
			issued++
		case codeOf(err) == fault.Conflict:
			refused++
		default:
			t.Errorf("IssueCredential: %v", err)
		}
	}
	if issued != MaxCredentials || refused != 5 {
		t.Errorf("%d credentials asked for at once: %d issued and %d refused, want %d and 5", cap(errs), issued, refused, MaxCredentials)
	}
	var one models.PartnerCredential
	s.db.Take(&one, "partner_id = ?", p.ID)
	if err := s.Revoke(ctx, p.ID, one.KeyID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.IssueCredential(ctx, p.ID, models.EnvSandbox, []string{ScopeSearch}); err != nil {
		t.Errorf("a credential after revoking one: %v", err)
	}
	if _, err := s.Approve(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.IssueCredential(ctx, p.ID, models.EnvLive, []string{ScopeSearch}); err != nil {
		t.Errorf("a live credential beside %d sandbox ones: %v", MaxCredentials, err)
	}
}

func TestCredentialsFollowApproval(t *testing.T) {
	t.Parallel()
	s := newService(t)
	ctx := context.Background()
	p, err := s.Create(ctx, "Acme Domains", "Sales@Acme.example")
	if err != nil || p.Status != models.PartnerPending || p.ContactEmail != "sales@acme.example" {
		t.Fatalf("Create = %+v, %v", p, err)
	}
	if _, err := s.IssueCredential(ctx, p.ID, models.EnvLive, []string{ScopeSearch}); codeOf(err) != fault.Conflict {
		t.Errorf("live credential before approval = %v, want conflict", err)
	}
	sandbox, err := s.IssueCredential(ctx, p.ID, models.EnvSandbox, []string{ScopeWebhook, ScopeSearch, ScopeSearch})
	if err != nil || sandbox.KeyID[:8] != "pk_test_" || !slices.Equal(sandbox.Scopes, []string{ScopeSearch, ScopeWebhook}) {
		t.Fatalf("sandbox credential = %+v, %v", sandbox, err)
	}
	if _, err := s.Approve(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	live, err := s.IssueCredential(ctx, p.ID, models.EnvLive, AllScopes)
	if err != nil || live.KeyID[:8] != "pk_live_" {
		t.Fatalf("live credential after approval = %+v, %v", live, err)
	}
	c, err := s.Authenticate(ctx, live.KeyID)
	if err != nil || string(c.Secret) != live.Secret || c.Environment != models.EnvLive || !c.Has(ScopeBuy) {
		t.Fatalf("Authenticate = %+v, %v", c, err)
	}
	var row models.PartnerCredential
	s.db.Take(&row, "key_id = ?", live.KeyID)
	if bytes.Contains(row.SecretSealed, []byte(live.Secret)) {
		t.Error("the secret is stored in the clear")
	}
	if err := s.Revoke(ctx, p.ID, live.KeyID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, live.KeyID); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("a revoked key authenticates: %v", err)
	}
	if err := s.Revoke(ctx, p.ID, live.KeyID); codeOf(err) != fault.NotFound {
		t.Errorf("revoking twice = %v, want not_found", err)
	}
	for _, bad := range []string{"", "pk_test_nope", "sk_live_x", "pk_live_" + string(make([]byte, 40))} {
		if _, err := s.Authenticate(ctx, bad); !errors.Is(err, ErrUnknownKey) {
			t.Errorf("Authenticate(%q) = %v, want ErrUnknownKey", bad, err)
		}
	}
}

func TestBadInputIsRefused(t *testing.T) {
	t.Parallel()
	s := newService(t)
	ctx := context.Background()
	for name, err := range map[string]error{
		"no name":   func() error { _, err := s.Create(ctx, " ", "a@example.com"); return err }(),
		"bad email": func() error { _, err := s.Create(ctx, "A", "not-an-email"); return err }(),
	} {
		if codeOf(err) != fault.Validation {
			t.Errorf("%s: %v, want validation_error", name, err)
		}
	}
	p, _ := s.Create(ctx, "A", "a@example.com")
	for name, tc := range map[string]struct {
		env    string
		scopes []string
		field  string
	}{
		"unknown environment": {"staging", []string{ScopeSearch}, "environment"},
		"no scopes":           {models.EnvSandbox, nil, "scopes"},
		"unknown scope":       {models.EnvSandbox, []string{"admin"}, "scopes"},
	} {
		_, err := s.IssueCredential(ctx, p.ID, tc.env, tc.scopes)
		if e, ok := fault.As(err); !ok || e.Field != tc.field {
			t.Errorf("%s: %v, want a validation error on %s", name, err, tc.field)
		}
	}
	if _, err := s.IssueCredential(ctx, "prt_nobody", models.EnvSandbox, AllScopes); codeOf(err) != fault.NotFound {
		t.Errorf("unknown partner = %v, want not_found", err)
	}
}

// A person who applies gets, on approval, a sandbox credential they see
// once on their account page.
func TestApplicationsGetASandboxCredentialShownOnce(t *testing.T) {
	t.Parallel()
	s := newService(t)
	ctx := context.Background()
	p, err := s.Apply(ctx, "user-1", "Side Project", "me@example.com")
	if err != nil || p.Status != models.PartnerPending {
		t.Fatalf("Apply = %+v, %v", p, err)
	}
	if _, err := s.Apply(ctx, "user-1", "Again", "me@example.com"); codeOf(err) != fault.Conflict {
		t.Errorf("second application = %v, want conflict", err)
	}
	if _, _, ok, _ := reveal(t, s, "user-1"); ok {
		t.Error("a credential before approval")
	}
	if _, err := s.Approve(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	keyID, sec, ok, err := reveal(t, s, "user-1")
	if err != nil || !ok || keyID[:8] != "pk_test_" || sec == "" {
		t.Fatalf("RevealCredential = %q %q %v %v", keyID, sec, ok, err)
	}
	if c, err := s.Authenticate(ctx, keyID); err != nil || string(c.Secret) != sec || len(c.Scopes) != len(AllScopes) {
		t.Errorf("the revealed credential = %+v, %v", c, err)
	}
	if _, _, ok, _ := reveal(t, s, "user-1"); ok {
		t.Error("the credential was shown twice")
	}
	if _, err := s.Approve(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := reveal(t, s, "user-1"); ok {
		t.Error("approving again issued another credential")
	}
}

// reveal reveals the credential of userID's partner, read as the account
// page reads it.
func reveal(t *testing.T, s *Service, userID string) (keyID, sec string, ok bool, err error) {
	t.Helper()
	p, err := s.OwnedBy(context.Background(), userID)
	if err != nil {
		t.Fatal(err)
	}
	return s.RevealCredential(context.Background(), p)
}

// A credential sealed under another secret key (DOMAIND_SECRET_KEY
// changed after the approval) cannot be shown: that is an error, and the
// credential stays, shown once the key is back.
func TestACredentialThatCannotBeOpenedIsKept(t *testing.T) {
	t.Parallel()
	s := newService(t)
	ctx := context.Background()
	p, err := s.Apply(ctx, "user-1", "Side Project", "me@example.com")
	if err == nil {
		_, err = s.Approve(ctx, p.ID)
	}
	if err != nil {
		t.Fatal(err)
	}
	rekeyed := New(s.db, []byte("another-secret-key-0123456789abc"), s.now)
	if _, _, ok, err := reveal(t, rekeyed, "user-1"); !errors.Is(err, ErrCredentialUnreadable) || ok {
		t.Errorf("under another key: ok %v, %v; want ErrCredentialUnreadable", ok, err)
	}
	if keyID, _, ok, err := reveal(t, s, "user-1"); err != nil || !ok || keyID == "" {
		t.Errorf("with the key back = %q, %v, %v; want the credential, still unseen", keyID, ok, err)
	}
}

// TestTouchRecordsUseAtMostOnceAMinute: a credential's last use is written
// on its first request and again only a minute later.
func TestTouchRecordsUseAtMostOnceAMinute(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := New(modelstest.NewDB(t), []byte("test-secret-key-0123456789abcdef"), func() time.Time { return now })
	ctx := context.Background()
	p, err := s.Create(ctx, "Acme", "ops@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.IssueCredential(ctx, p.ID, models.EnvSandbox, []string{ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	lastUsed := func() time.Time {
		var row models.PartnerCredential
		s.db.Take(&row, "key_id = ?", c.KeyID)
		if row.LastUsedAt == nil {
			return time.Time{}
		}
		return row.LastUsedAt.UTC()
	}
	for _, step := range []struct {
		after time.Duration
		want  time.Time
	}{
		{0, now}, {30 * time.Second, now}, {61 * time.Second, now.Add(61 * time.Second)},
	} {
		at := now.Add(step.after)
		s.now = func() time.Time { return at }
		if err := s.Touch(ctx, c.KeyID); err != nil {
			t.Fatal(err)
		}
		if got := lastUsed(); !got.Equal(step.want) {
			t.Errorf("after %v: last used %v, want %v", step.after, got, step.want)
		}
	}
}

// Approvals sent at once (a double-clicked button) issue the applicant
// one sandbox credential, the one its owner is shown.
func TestConcurrentApprovalsIssueOneCredential(t *testing.T) {
	t.Parallel()
	s := newService(t)
	ctx := context.Background()
	p, err := s.Apply(ctx, "user-1", "Side Project", "me@example.com")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := s.Approve(ctx, p.ID); err != nil {
				t.Errorf("Approve: %v", err)
			}
		})
	}
	wg.Wait()
	var issued int64
	s.db.Model(&models.PartnerCredential{}).Where("partner_id = ?", p.ID).Count(&issued)
	keyID, _, ok, err := reveal(t, s, "user-1")
	if issued != 1 || !ok || err != nil {
		t.Errorf("%d credentials issued (the owner shown %q, %v, %v); want one, shown", issued, keyID, ok, err)
	}
}
