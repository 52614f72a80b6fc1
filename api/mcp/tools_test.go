package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/ratelimit"
)

// A whois_lookup call whose lookup failed on our side or the registries'
// hands its quota unit to GiveBack, as POST /api/tools/whois gives its
// unit back; one that found nothing, or found the record, keeps it spent.
func TestWhoisGivesBackTheUnitOfAFailedLookup(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	quota := ratelimit.PerDay("whois", 10)
	type back struct {
		client string
		unit   ratelimit.Result
	}
	var given []back
	outcome := struct {
		failed bool
		err    error
	}{}
	tl := &tools{Deps: Deps{
		Whois: lookUpFunc(func(context.Context, string) (lookup.Answer, bool, error) {
			return lookup.Answer{}, outcome.failed, outcome.err
		}),
		Limiter: ratelimit.New(r.Client, time.Now),
		Limits:  map[string]ratelimit.Policy{ToolWhois: quota},
		GiveBack: func(_ context.Context, p ratelimit.Policy, client string, u ratelimit.Result) {
			if p != quota {
				t.Errorf("gave back a unit of %+v, want of the whois quota", p)
			}
			given = append(given, back{client, u})
		},
	}}
	ctx := context.WithValue(context.Background(), callerKey{}, caller{tool: ToolWhois, who: &auth.TokenInfo{UserID: "u1"}})

	outcome.failed, outcome.err = true, fault.New(fault.LookupFailed, "RDAP and the WHOIS fallback both failed")
	if _, err := tl.whois(ctx, WhoisInput{Domain: "registry-down.net"}); !errors.Is(err, outcome.err) {
		t.Fatalf("whois = %v, want the lookup's failure", err)
	}
	if len(given) != 1 || given[0].client != "user:u1" || !given[0].unit.Allowed || given[0].unit.Used != 1 {
		t.Fatalf("given back %+v, want the user's first unit", given)
	}

	// The lookup could not even start (the cache's Redis is down): the
	// service failed, which the HTTP API answers 503 and gives back.
	outcome.failed, outcome.err = false, fmt.Errorf("lookup cache: %w", redis.ErrClosed)
	if _, err := tl.whois(ctx, WhoisInput{Domain: "example.org"}); !errors.Is(err, outcome.err) {
		t.Fatalf("whois = %v, want the cache's failure", err)
	}
	if len(given) != 2 || given[1].client != "user:u1" || given[1].unit.Used != 2 {
		t.Fatalf("given back %+v, want the unit of the call that failed on our side (its second)", given)
	}

	outcome.failed, outcome.err = false, fault.New(fault.NotFound, "neither RDAP nor the WHOIS fallback has data")
	if _, err := tl.whois(ctx, WhoisInput{Domain: "free-name.net"}); !errors.Is(err, outcome.err) {
		t.Fatalf("whois = %v, want not found", err)
	}
	outcome.err = nil
	if _, err := tl.whois(ctx, WhoisInput{Domain: "example.net"}); err != nil {
		t.Fatal(err)
	}
	if len(given) != 2 {
		t.Errorf("given back %+v, want nothing more for a name not found or found", given)
	}
}

// lookUpFunc is a Whois that answers what its function does.
type lookUpFunc func(ctx context.Context, domain string) (lookup.Answer, bool, error)

func (f lookUpFunc) LookUp(ctx context.Context, domain string) (lookup.Answer, bool, error) {
	return f(ctx, domain)
}

func TestPerSaysTheWindowInWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    ratelimit.Policy
		want string
	}{
		{ratelimit.PerDay("q", 10), "a day"},
		{ratelimit.PerHour("h", 30), "an hour"},
		{ratelimit.PerMinute("m", 60), "a minute"},
		{ratelimit.Policy{Name: "w", Kind: ratelimit.Rate, Limit: 5, Window: 15 * time.Minute}, "per 15 minutes"},
	} {
		if got := per(tc.p); got != tc.want {
			t.Errorf("per(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

// A tool's limit counts for the token's user and for the caller's address:
// a second account from the same address shares the address's calls, and a
// call the address refuses spends none of the user's.
func TestLimitsCountPerUserAndPerAddress(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	quota := ratelimit.PerDay("whois", 2)
	tl := &tools{Deps: Deps{
		Limiter: ratelimit.New(r.Client, time.Now),
		Limits:  map[string]ratelimit.Policy{ToolWhois: quota},
		Log:     slog.New(slog.DiscardHandler),
	}}
	call := func(user, address string) error {
		who := &auth.TokenInfo{UserID: user, Extra: map[string]any{extraAddress: address}}
		_, err := tl.spend(context.WithValue(context.Background(), callerKey{}, caller{tool: ToolWhois, who: who}))
		return err
	}
	for i := range 2 {
		if err := call("u1", "203.0.113.7"); err != nil {
			t.Fatalf("call %d of u1: %v", i+1, err)
		}
	}
	if err := call("u2", "203.0.113.7"); !refusedWith(err, fault.QuotaExceeded) {
		t.Fatalf("u2 from u1's address = %v, want quota_exceeded: the address has spent its calls", err)
	}
	for i := range 2 {
		if err := call("u2", "198.51.100.9"); err != nil {
			t.Fatalf("call %d of u2 from another address = %v, want allowed: the refused call spent none of u2's", i+1, err)
		}
	}
	if err := call("u1", "192.0.2.1"); !refusedWith(err, fault.QuotaExceeded) {
		t.Fatalf("u1 from a new address = %v, want quota_exceeded: the user has spent its calls", err)
	}
}

// refusedWith says err is a coded error of code.
func refusedWith(err error, code fault.Code) bool {
	e, ok := fault.As(err)
	return ok && e.Code == code
}
