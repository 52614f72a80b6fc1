package sandbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	ctx := context.Background()
	n, err := Seed(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := Seed(ctx, db); err != nil || again != 0 {
		t.Errorf("second seed added %d rows (%v), want 0", again, err)
	}
	if n < 6000 {
		t.Errorf("seed added %d rows, want thousands of names", n)
	}
	s := New(db, 0)
	tests := []struct {
		name string
		want registry.Availability
	}{
		{"google.com", registry.Availability{Reason: "registered"}},
		{"nic.dev", registry.Availability{Reason: "reserved"}},
		{"x.dev", registry.Availability{Available: true, Premium: true, Cents: 2500000, Currency: "USD"}},
		{"surely-nobody-has-this-0x7f.com", registry.Availability{Available: true, Cents: 1099, Currency: "USD"}},
		{"google.tv", registry.Availability{Available: true, Cents: 3499, Currency: "USD"}},
	}
	for _, tc := range tests {
		got, err := s.Check(ctx, tc.name)
		if err != nil || got != tc.want {
			t.Errorf("Check(%s) = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	if _, err := s.Check(ctx, "example.notatld"); !errors.Is(err, registry.ErrUnknownTLD) {
		t.Errorf("unknown TLD err = %v", err)
	}
	if _, err := s.Check(ctx, "com"); err == nil {
		t.Errorf("a bare TLD was checked")
	}
}

func TestLatencyAndCancellation(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	s := New(db, 50*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if _, err := s.TLDs(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline: a call must wait for the latency and give up with its context", err)
	}
}

func TestUpdateDomainAppliesEachChangeOnce(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	ctx := context.Background()
	if _, err := Seed(ctx, db); err != nil {
		t.Fatal(err)
	}
	s := New(db, 0)
	locked, unlocked := true, false
	if err := s.UpdateDomain(ctx, "google.com", registry.Update{Locked: &locked, Nameservers: []string{"ns1.a.net", "ns2.a.net"}}, "c1"); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateDomain(ctx, "google.com", registry.Update{Locked: &unlocked}, "c2"); err != nil {
		t.Fatal(err)
	}
	// c1 again (a resumed caller): already applied, so it must not undo c2.
	if err := s.UpdateDomain(ctx, "google.com", registry.Update{Locked: &locked}, "c1"); err != nil {
		t.Fatal(err)
	}
	var n models.SandboxName
	db.First(&n, "name = ?", "google.com")
	if n.Locked || len(n.Nameservers) != 2 {
		t.Errorf("google.com = locked %v, nameservers %v; want unlocked (c2) with c1's nameservers", n.Locked, n.Nameservers)
	}
	var changes int64
	db.Model(&models.SandboxChange{}).Count(&changes)
	if changes != 2 {
		t.Errorf("%d changes logged, want 2", changes)
	}
	for _, name := range []string{"nic.dev", "surely-nobody-has-this-0x7f.com"} { // reserved, available
		if err := s.UpdateDomain(ctx, name, registry.Update{Locked: &locked}, "c3-"+name); !errors.Is(err, registry.ErrDomainNotHeld) {
			t.Errorf("update of %s = %v, want ErrDomainNotHeld", name, err)
		}
	}
}

// Pushes succeed but to the two recipients that show a push's failures:
// one refused at once, and one made with its answer lost, whose repeat is
// refused as a real registry refuses to push a name twice.
func TestPushDomain(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	ctx := context.Background()
	s := New(db, 0)
	if err := s.PushDomain(ctx, "sold.com", "buyer-registrar", "p1"); err != nil {
		t.Errorf("a push = %v", err)
	}
	if err := s.PushDomain(ctx, "sold.com", RefusingRecipient, "p2"); !errors.Is(err, registry.ErrPushRefused) {
		t.Errorf("a push to %s = %v, want refused", RefusingRecipient, err)
	}
	for _, want := range []error{registry.ErrTransient, registry.ErrPushRefused, registry.ErrPushRefused} {
		if err := s.PushDomain(ctx, "lost.com", LosingRecipient, "p3"); !errors.Is(err, want) {
			t.Errorf("a push to %s = %v, want %v", LosingRecipient, err, want)
		}
	}
	if err := s.PushDomain(ctx, "lost.com", LosingRecipient, "p4"); !errors.Is(err, registry.ErrTransient) {
		t.Errorf("another push to %s = %v, want its answer lost", LosingRecipient, err)
	}
}
