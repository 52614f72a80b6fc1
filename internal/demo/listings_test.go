package demo

import (
	"context"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

func TestNamesAreValidAndNeverRepeat(t *testing.T) {
	seen := map[string]bool{}
	for i := range 30_000 {
		n := name(i)
		if seen[n] {
			t.Fatalf("name(%d) = %q repeats an earlier name", i, n)
		}
		seen[n] = true
		if _, err := domainname.Parse(n); err != nil {
			t.Fatalf("name(%d) = %q is not a valid domain: %v", i, n, err)
		}
	}
}

func TestListingsLookLikeAMarketplace(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, n := range []int{2500, 1500} { // two calls add distinct names
		if got, err := Listings(ctx, db, n, 7, now); err != nil || got != n {
			t.Fatalf("Listings(%d) = %d, %v", n, got, err)
		}
	}
	var ls []models.Listing
	db.Find(&ls)
	if len(ls) != 4000 {
		t.Fatalf("%d listings, want 4000", len(ls))
	}
	var noBIN, public int
	tlds := map[string]bool{}
	for _, l := range ls {
		tlds[l.TLD] = true
		if l.Approved && l.MarketplaceVisible {
			public++
		}
		if l.BINCents == nil {
			noBIN++
			if l.SortPriceAsc != models.NoPriceAsc || l.SortPriceDesc != models.NoPriceDesc {
				t.Fatalf("listing without a price has sort keys %d/%d", l.SortPriceAsc, l.SortPriceDesc)
			}
			continue
		}
		if b := *l.BINCents; b < 10_000 || b > 25_000_000 || b%100 != 0 || l.SortPriceAsc != b {
			t.Fatalf("buy-now price %d cents (sort key %d): want whole dollars from $100 to $250,000", b, l.SortPriceAsc)
		}
		if l.FloorCents != nil && *l.FloorCents > *l.BINCents {
			t.Fatalf("floor %d above buy-now %d", *l.FloorCents, *l.BINCents)
		}
		if age := now.Sub(l.CreatedAt); age < 0 || age > 731*24*time.Hour {
			t.Fatalf("listed %v ago, want within two years", age)
		}
	}
	if noBIN < 250 || noBIN > 600 || public < 3600 || public == 4000 || len(tlds) < 20 {
		t.Errorf("%d without buy-now, %d public, %d TLDs: want about a tenth, most but not all, 20+", noBIN, public, len(tlds))
	}
}
