package availability

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/registry"
)

func TestResult(t *testing.T) {
	tests := []struct {
		name string
		a    registry.Availability
		err  error
		want string
	}{
		{"available", registry.Availability{Available: true, Cents: 1099}, nil, Available},
		{"premium", registry.Availability{Available: true, Premium: true, Cents: 250000}, nil, Premium},
		{"registered", registry.Availability{Reason: registry.ReasonRegistered}, nil, Registered},
		{"reserved", registry.Availability{Reason: registry.ReasonReserved}, nil, Reserved},
		{"registry wording for reserved", registry.Availability{Reason: "reserved by registry policy"}, nil, Reserved},
		{"unrecognised reason counts as taken", registry.Availability{Reason: "domain exists"}, nil, Registered},
		{"not sold", registry.Availability{Reason: registry.ReasonNotSold}, nil, Unsupported},
		{"unknown TLD", registry.Availability{}, fmt.Errorf("x: %w", registry.ErrUnknownTLD), Unsupported},
		{"failure is unknown, never available", registry.Availability{Available: true}, errors.New("timeout"), Unknown},
	}
	for _, tc := range tests {
		if got := result(tc.a, tc.err); got.State != tc.want {
			t.Errorf("%s: state %q, want %q", tc.name, got.State, tc.want)
		}
	}
}

// blockingRegistry is a provider whose checks fail only when their context
// ends, as a registry that never answers; it hands back that context's error.
type blockingRegistry struct{ registry.Provider }

func (blockingRegistry) Name() string { return "blocking" }

func (blockingRegistry) Check(ctx context.Context, name string) (registry.Availability, error) {
	<-ctx.Done()
	return registry.Availability{}, fmt.Errorf("check %s: %w", name, ctx.Err())
}

// failingRegistry is a provider that answers every check with an error
// unrelated to time.
type failingRegistry struct{ registry.Provider }

func (failingRegistry) Name() string { return "failing" }

func (failingRegistry) Check(context.Context, string) (registry.Availability, error) {
	return registry.Availability{}, errors.New("rtr: 503 unavailable")
}

func TestCheckTellsATimeoutApart(t *testing.T) {
	t.Parallel()
	rdb := platformtest.NewRedis(t).Client
	t.Run("the registry ran out of the checker's time", func(t *testing.T) {
		r := New(blockingRegistry{}, rdb, time.Millisecond).Check(context.Background(), "slow.com")
		if r.State != Unknown || !errors.Is(r.Err, ErrTimeout) {
			t.Errorf("check = %+v, want unknown wrapping ErrTimeout", r)
		}
	})
	t.Run("the caller gave up", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := New(blockingRegistry{}, rdb, time.Hour).Check(ctx, "left.com")
		if r.State != Unknown || errors.Is(r.Err, ErrTimeout) || !errors.Is(r.Err, context.Canceled) {
			t.Errorf("check = %+v, want unknown wrapping context.Canceled, not ErrTimeout", r)
		}
	})
	t.Run("the registry failed", func(t *testing.T) {
		r := New(failingRegistry{}, rdb, time.Hour).Check(context.Background(), "broken.com")
		if r.State != Unknown || r.Err == nil || errors.Is(r.Err, ErrTimeout) {
			t.Errorf("check = %+v, want unknown with the registry's error, not ErrTimeout", r)
		}
	})
}

func TestCheckLabel(t *testing.T) {
	ly := registry.DomainSyntax{MinLength: 3, MaxLength: 20}
	idn := registry.DomainSyntax{MinLength: 1, MaxLength: 63, IDNSupport: true}
	tests := []struct {
		name, label string
		rules       registry.DomainSyntax
		wantRule    string // "" means allowed
		wantLimit   int
		wantReason  string
	}{
		{"at the minimum", "abc", ly, "", 0, ""},
		{"below the minimum", "ab", ly, RuleMinLength, 3, "Too short for .ly (3+ characters)"},
		{"at the maximum", strings.Repeat("a", 20), ly, "", 0, ""},
		{"above the maximum", strings.Repeat("a", 21), ly, RuleMaxLength, 20, "Too long for .ly (at most 20 characters)"},
		{"IDN where the TLD takes none", "xn--bcher-kva", ly, RuleIDN, 0, "No internationalised names under .ly"},
		{"IDN where the TLD takes them", "xn--bcher-kva", idn, "", 0, ""},
		{"IDN length counts the ASCII form", "xn--tda", registry.DomainSyntax{MaxLength: 6, IDNSupport: true}, RuleMaxLength, 6, "Too long for .ly (at most 6 characters)"},
		{"no length rules given", "a", registry.DomainSyntax{}, "", 0, ""},
		{"hyphenated ASCII is not an IDN", "ab-cd", ly, "", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckLabel(tc.label, "ly", tc.rules)
			var se *SyntaxError
			if tc.wantRule == "" {
				if err != nil {
					t.Fatalf("CheckLabel(%q) = %v, want allowed", tc.label, err)
				}
				return
			}
			if !errors.As(err, &se) {
				t.Fatalf("CheckLabel(%q) = %v, want a *SyntaxError", tc.label, err)
			}
			if se.Rule != tc.wantRule || se.Limit != tc.wantLimit || se.Reason() != tc.wantReason {
				t.Errorf("CheckLabel(%q) = rule %q limit %d reason %q, want %q %d %q",
					tc.label, se.Rule, se.Limit, se.Reason(), tc.wantRule, tc.wantLimit, tc.wantReason)
			}
		})
	}
}

// premiumRegistry quotes every name as premium in euros.
type premiumRegistry struct{ registry.Provider }

func (premiumRegistry) Name() string { return "premium" }

func (premiumRegistry) Check(context.Context, string) (registry.Availability, error) {
	return registry.Availability{Available: true, Premium: true, Cents: 125000, Currency: "EUR"}, nil
}

func TestCheckKeepsTheRegistrysCurrency(t *testing.T) {
	t.Parallel()
	c := New(premiumRegistry{}, platformtest.NewRedis(t).Client, time.Hour)
	for _, wantCached := range []bool{false, true} {
		r := c.Check(context.Background(), "gold.com")
		if r.State != Premium || r.Cents != 125000 || r.Currency != "EUR" || r.Cached != wantCached {
			t.Errorf("check (cached %v) = %+v, want premium 125000 EUR", wantCached, r)
		}
	}
}
