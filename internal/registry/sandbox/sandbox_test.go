package sandbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/models/modelstest"
)

func TestCheck(t *testing.T) {
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
	db := modelstest.NewDB(t)
	s := New(db, 50*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if _, err := s.TLDs(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline: a call must wait for the latency and give up with its context", err)
	}
}
