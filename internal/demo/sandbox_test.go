package demo

import (
	"context"
	"testing"
	"time"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

func TestSandboxInventoryIsVariedAndSeededOnce(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	if got, err := SandboxInventory(ctx, db, 2000, now); err != nil || got != 2000 {
		t.Fatalf("SandboxInventory(2000) = %d, %v", got, err)
	}
	if got, err := SandboxInventory(ctx, db, 2000, now); err != nil || got != 0 {
		t.Fatalf("second SandboxInventory(2000) = %d, %v; want nothing added", got, err)
	}
	var ls []models.SandboxListing
	db.Find(&ls)
	if len(ls) != 2000 {
		t.Fatalf("%d sandbox listings, want 2000", len(ls))
	}
	tlds := map[string]bool{}
	levels := [3]int{}
	names := map[string]bool{}
	for _, l := range ls {
		tlds[l.TLD] = true
		names[l.Domain] = true
		if l.BINCents == nil {
			t.Fatalf("%s has no buy-now price", l.Domain)
		}
		if b := *l.BINCents; b < 2_000 || b > 5_000_000 {
			t.Fatalf("%s: buy-now %d cents, want $20 to $50,000", l.Domain, b)
		}
		if l.FloorCents != nil && *l.FloorCents > *l.BINCents {
			t.Fatalf("%s: floor %d above buy-now %d", l.Domain, *l.FloorCents, *l.BINCents)
		}
		switch b := *l.BINCents; {
		case b <= 50_000:
			levels[0]++
		case b <= 500_000:
			levels[1]++
		default:
			levels[2]++
		}
	}
	if len(tlds) < 20 {
		t.Errorf("%d TLDs, want at least 20", len(tlds))
	}
	for i, n := range levels {
		if n < 500 {
			t.Errorf("price level %d holds %d listings, want about a third", i, n)
		}
	}
	for _, d := range []string{"budgetairfare.com", "cheapflightsnow.com", "petgroomingpro.com"} {
		if !names[d] {
			t.Errorf("%s is not in the sandbox; the README's examples search for it", d)
		}
	}
}
