package partner_test

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/demo"
	"github.com/domaind/domaind/internal/registry/sandbox"
	"github.com/domaind/domaind/internal/tldsync"
	"github.com/domaind/domaind/models"
)

type searchAnswer struct {
	Results []struct {
		Domain     string  `json:"domain"`
		PriceCents *int64  `json:"price_cents"`
		Currency   string  `json:"currency"`
		Available  bool    `json:"available"`
		Score      float64 `json:"score"`
	} `json:"results"`
	Count int `json:"count"`
}

func (a searchAnswer) domains() []string {
	var out []string
	for _, r := range a.Results {
		out = append(out, r.Domain)
	}
	return out
}

// TestSearchFindsByMeaningInItsOwnEnvironment: a sandbox key searches the
// seeded sandbox by meaning, five results at most; a live key sees the
// marketplace and never the sandbox, and the reverse.
func TestSearchFindsByMeaningInItsOwnEnvironment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if _, err := demo.SandboxInventory(ctx, e.db, 2000, e.now); err != nil {
		t.Fatal(err)
	}
	e.addLive("livecoffeeroasters.com", 500_000)
	sb := e.client(e.credential(models.EnvSandbox, "search"), 0)
	live := e.client(e.credential(models.EnvLive, "search"), 0)

	// The queries share no word with the names they must find; every hit
	// is about the query's subject (in a crowded sandbox, other cheap
	// travel names compete with budgetairfare.com for the five places).
	for _, tc := range []struct {
		q     string
		want  string
		topic []string
	}{
		{"inexpensive plane tickets", "cheapflightsnow.com", []string{"flight", "air", "trip", "travel", "fare", "ticket", "jet", "plane", "fly"}},
		{"puppy grooming", "petgroomingpro.com", []string{"pet", "dog", "pup", "groom", "paw"}},
	} {
		q := tc.q
		var got searchAnswer
		if err := sb.GetJSON(ctx, "/api/partner/v1/domains/search", url.Values{"q": {q}, "limit": {"50"}}, &got); err != nil {
			t.Fatal(err)
		}
		if got.Count != len(got.Results) || got.Count > 5 || got.Count == 0 {
			t.Errorf("%q: count %d with %d results, want 1 to 5", q, got.Count, len(got.Results))
		}
		if !slices.Contains(got.domains(), tc.want) {
			t.Errorf("sandbox search %q = %v, want %s among them", q, got.domains(), tc.want)
		}
		for _, r := range got.Results {
			if !slices.ContainsFunc(tc.topic, func(w string) bool { return strings.Contains(r.Domain, w) }) {
				t.Errorf("sandbox search %q found %s, off the subject", q, r.Domain)
			}
			if r.PriceCents == nil || r.Currency != "USD" || !r.Available || r.Score <= 0 {
				t.Errorf("%q: result %+v, want a priced, available hit with a score", q, r)
			}
		}
	}

	var got searchAnswer
	if err := live.GetJSON(ctx, "/api/partner/v1/domains/search", url.Values{"q": {"cheap flights"}}, &got); err != nil {
		t.Fatal(err)
	}
	for _, d := range got.domains() {
		if d != "livecoffeeroasters.com" {
			t.Errorf("live search shows %s, a sandbox name", d)
		}
	}
	if err := live.GetJSON(ctx, "/api/partner/v1/domains/search", url.Values{"q": {"coffee roasters"}}, &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got.domains(), "livecoffeeroasters.com") {
		t.Errorf("live search for coffee roasters = %v, want the live listing", got.domains())
	}
	if err := sb.GetJSON(ctx, "/api/partner/v1/domains/search", url.Values{"q": {"livecoffeeroasters"}}, &got); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(got.domains(), "livecoffeeroasters.com") {
		t.Errorf("sandbox search shows the live listing: %v", got.domains())
	}

	for _, q := range []url.Values{{}, {"q": {"   "}}} {
		err := sb.GetJSON(ctx, "/api/partner/v1/domains/search", q, nil)
		if ae := wantAPIError(t, "search without q", err, 400, "validation_error"); ae.Field != "q" {
			t.Errorf("search without q names field %q, want q", ae.Field)
		}
	}
}

// TestDomainDetailAvailabilityAndPricing reads one listing three ways, and
// an unlisted or malformed name each way.
func TestDomainDetailAvailabilityAndPricing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if _, err := sandbox.Seed(ctx, e.db); err != nil {
		t.Fatal(err)
	}
	if _, err := tldsync.Run(ctx, e.db, sandbox.New(e.db, 0), slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	e.addSandbox("sunsetyoga.io", 250_000)
	e.addLive("northstarlabs.com", 9_900_000)
	c := e.client(e.credential(models.EnvSandbox, "search"), 0)

	var detail struct {
		Domain      string     `json:"domain"`
		TLD         string     `json:"tld"`
		PriceCents  *int64     `json:"price_cents"`
		Available   bool       `json:"available"`
		HeldUntil   *time.Time `json:"held_until"`
		TLDMetadata *struct {
			MinYears int `json:"minYears"`
		} `json:"tld_metadata"`
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/domains/SunsetYoga.IO", nil, &detail); err != nil {
		t.Fatal(err)
	}
	if detail.Domain != "sunsetyoga.io" || detail.TLD != "io" || detail.PriceCents == nil || *detail.PriceCents != 250_000 ||
		!detail.Available || detail.HeldUntil != nil || detail.TLDMetadata == nil || detail.TLDMetadata.MinYears < 1 {
		t.Errorf("detail = %+v, want sunsetyoga.io at 250000 cents, available, with .io's rules", detail)
	}
	err := c.GetJSON(ctx, "/api/partner/v1/domains/northstarlabs.com", nil, nil)
	wantAPIError(t, "a live listing asked with a sandbox key", err, 404, "not_found")
	err = c.GetJSON(ctx, "/api/partner/v1/domains/-bad-.com", nil, nil)
	if ae := wantAPIError(t, "a malformed name", err, 400, "validation_error"); ae.Field != "name" {
		t.Errorf("a malformed name names field %q, want name", ae.Field)
	}

	var avail struct {
		Domain     string  `json:"domain"`
		Available  bool    `json:"available"`
		PriceCents *int64  `json:"price_cents"`
		Currency   *string `json:"currency"`
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/availability", url.Values{"domain": {"sunsetyoga.io"}}, &avail); err != nil {
		t.Fatal(err)
	}
	if !avail.Available || avail.PriceCents == nil || *avail.PriceCents != 250_000 || avail.Currency == nil {
		t.Errorf("availability of a listed name = %+v", avail)
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/availability", url.Values{"domain": {"northstarlabs.com"}}, &avail); err != nil {
		t.Fatal(err)
	}
	if avail.Available || avail.PriceCents != nil || avail.Domain != "northstarlabs.com" {
		t.Errorf("availability of a name unlisted here = %+v, want 200 not available without a price", avail)
	}

	var price struct {
		Domain      string `json:"domain"`
		BuyNowCents *int64 `json:"buy_now_cents"`
		Currency    string `json:"currency"`
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/pricing", url.Values{"domain": {"sunsetyoga.io"}}, &price); err != nil {
		t.Fatal(err)
	}
	if price.BuyNowCents == nil || *price.BuyNowCents != 250_000 || price.Currency != "USD" {
		t.Errorf("pricing = %+v", price)
	}
	err = c.GetJSON(ctx, "/api/partner/v1/pricing", url.Values{"domain": {"northstarlabs.com"}}, nil)
	wantAPIError(t, "pricing of an unlisted name", err, 404, "not_found")

	for _, path := range []string{"/api/partner/v1/availability", "/api/partner/v1/pricing"} {
		for _, bad := range []url.Values{{}, {"domain": {"not a domain"}}, {"domain": {"-bad-.com"}}} {
			err := c.GetJSON(ctx, path, bad, nil)
			if ae := wantAPIError(t, path+" "+bad.Encode(), err, 400, "validation_error"); ae.Field != "domain" {
				t.Errorf("%s %s names field %q, want domain", path, bad.Encode(), ae.Field)
			}
		}
	}
}
