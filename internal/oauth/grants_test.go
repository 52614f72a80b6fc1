package oauth

import (
	"context"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fault"
)

// Allowed lists each client a person allowed once, however many grants it
// holds (the oldest consent, the last use, the latest end), not another
// person's grants, nor a grant ended or past its end;
// Disallow ends all of one client's grants of the person and no others.
func TestAllowedAndDisallow(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	exchange := func(userID string) Tokens {
		t.Helper()
		r := w.request("")
		code, err := w.s.IssueCode(ctx, r, userID, ScopePricingRead)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := w.s.ExchangeCode(ctx, r.ClientID, code, redirect, verifier, "")
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	first := w.now
	exchange("user-1")
	w.now = w.now.Add(time.Hour)
	second := exchange("user-1")
	w.now = w.now.Add(time.Hour)
	if _, err := w.s.Refresh(ctx, w.client.ID, second.RefreshToken, "", ""); err != nil {
		t.Fatal(err)
	}
	used := w.now
	others := exchange("user-2")

	other, err := w.s.Register(ctx, "Other App", []string{redirect})
	if err != nil {
		t.Fatal(err)
	}
	w.client, other = other, w.client // the world's requests are now the other app's
	w.now = w.now.Add(time.Minute)
	otherTok := exchange("user-1")
	w.client, other = other, w.client

	got, err := w.s.Allowed(ctx, "user-1")
	if err != nil || len(got) != 2 {
		t.Fatalf("Allowed = %+v, %v; want two apps", got, err)
	}
	if a := got[0]; a.ClientID != other.ID || a.ClientName != "Other App" {
		t.Errorf("the app used last = %+v, want Other App first", a)
	}
	if a := got[1]; a.ClientID != w.client.ID || a.ClientName != "Test App" || a.Scope != ScopePricingRead ||
		!a.Since.Equal(first) || !a.LastUsed.Equal(used) || !a.Ends.Equal(first.Add(time.Hour).Add(GrantTTL)) {
		t.Errorf("the app with two grants = %+v; want since %s, last used %s, ending %s", a, first, used, first.Add(time.Hour).Add(GrantTTL))
	}

	if err := w.s.Disallow(ctx, "user-1", w.client.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := w.s.Allowed(ctx, "user-1"); err != nil || len(got) != 1 || got[0].ClientID != other.ID {
		t.Errorf("Allowed after ending Test App = %+v, %v; want Other App alone", got, err)
	}
	if _, err := w.s.Authenticate(ctx, otherTok.AccessToken); err != nil {
		t.Errorf("another app's token after ending Test App: %v", err)
	}
	if _, err := w.s.Authenticate(ctx, others.AccessToken); err != nil {
		t.Errorf("another person's token of Test App: %v", err)
	}
	if err := w.s.Disallow(ctx, "user-1", w.client.ID); !isNotFound(err) {
		t.Errorf("ending Test App again = %v, want not found", err)
	}

	w.now = w.now.Add(GrantTTL)
	if got, err := w.s.Allowed(ctx, "user-1"); err != nil || len(got) != 0 {
		t.Errorf("Allowed past every grant's end = %+v, %v; want none", got, err)
	}
	if err := w.s.Disallow(ctx, "user-2", "oc_unknown"); !isNotFound(err) {
		t.Errorf("ending an unknown app = %v, want not found", err)
	}
}

func isNotFound(err error) bool {
	e, ok := fault.As(err)
	return ok && e.Code == fault.NotFound
}
