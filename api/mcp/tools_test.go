package mcp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

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

	outcome.failed, outcome.err = false, fault.New(fault.NotFound, "neither RDAP nor the WHOIS fallback has data")
	if _, err := tl.whois(ctx, WhoisInput{Domain: "free-name.net"}); !errors.Is(err, outcome.err) {
		t.Fatalf("whois = %v, want not found", err)
	}
	outcome.err = nil
	if _, err := tl.whois(ctx, WhoisInput{Domain: "example.net"}); err != nil {
		t.Fatal(err)
	}
	if len(given) != 1 {
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
