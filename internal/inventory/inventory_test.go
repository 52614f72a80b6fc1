package inventory

import (
	"context"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

func cents(v int64) *int64 { return &v }

func codeOf(err error) fault.Code {
	if e, ok := fault.As(err); ok {
		return e.Code
	}
	return ""
}

// newInventory is a Service on a database of its own, whose clock reads
// *now (a test may move it), and the database.
func newInventory(t *testing.T, now *time.Time) (*Service, *gorm.DB) {
	t.Helper()
	db := modelstest.NewDB(t)
	s := New(db, testKey, func() time.Time { return *now })
	t.Cleanup(s.Close)
	return s, db
}

// Sandbox and live inventories never see each other's names.
func TestEnvironmentsAreSeparate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s, db := newInventory(t, &now)
	ctx := context.Background()
	live, err := s.Add(ctx, models.EnvLive, "cheapflightsnow.com", cents(250000), cents(180000))
	if err != nil {
		t.Fatal(err)
	}
	sandbox, err := s.Add(ctx, models.EnvSandbox, "budgetairfare.com", cents(90000), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Find(ctx, models.EnvLive, "CheapFlightsNow.com"); err != nil || got.ID != live.ID || *got.BINCents != 250000 {
		t.Errorf("live Find = %+v, %v", got, err)
	}
	if _, err := s.Find(ctx, models.EnvSandbox, "cheapflightsnow.com"); codeOf(err) != fault.NotFound {
		t.Errorf("sandbox Find of a live name = %v, want not_found", err)
	}
	if _, err := s.Find(ctx, models.EnvLive, "budgetairfare.com"); codeOf(err) != fault.NotFound {
		t.Errorf("live Find of a sandbox name = %v, want not_found", err)
	}
	for env, want := range map[string]string{models.EnvLive: live.ID, models.EnvSandbox: sandbox.ID} {
		hits, err := s.Search(ctx, env, "inexpensive plane tickets")
		if err != nil || len(hits) != 1 || hits[0].ID != want {
			t.Errorf("%s search = %+v, %v; want only its own listing", env, hits, err)
		}
	}
	var marketplace models.Listing
	if err := db.Take(&marketplace, "id = ?", live.ID).Error; err != nil || !marketplace.Approved || !marketplace.MarketplaceVisible {
		t.Errorf("a live listing ops add = %+v, %v; want it in the marketplace", marketplace, err)
	}
}

func TestSearchIsCappedAndFollowsChanges(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s, _ := newInventory(t, &now)
	ctx := context.Background()
	for _, d := range []string{"petgroomingpro.com", "doggroomers.net", "puppyspa.io", "catgrooming.co", "petwash.shop", "groomingstudio.app", "furbabies.com"} {
		if _, err := s.Add(ctx, models.EnvSandbox, d, cents(50000), nil); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := s.Search(ctx, models.EnvSandbox, "puppy grooming")
	if err != nil || len(hits) != MaxResults {
		t.Fatalf("search = %d hits, %v; want the cap of %d", len(hits), err, MaxResults)
	}
	var domains []string
	for _, h := range hits {
		domains = append(domains, h.Domain)
	}
	if !slices.Contains(domains, "petgroomingpro.com") {
		t.Errorf("puppy grooming = %v, want petgroomingpro.com among them", domains)
	}
	added, _ := s.Add(ctx, models.EnvSandbox, "puppygroomingpalace.com", cents(70000), nil)
	if hits, _ := s.Search(ctx, models.EnvSandbox, "puppy grooming palace"); len(hits) == 0 || hits[0].ID != added.ID {
		t.Errorf("a name added after the index was built = %+v, want it first", hits)
	}
	if err := s.Remove(ctx, models.EnvSandbox, added.ID); err != nil {
		t.Fatal(err)
	}
	for _, h := range mustSearch(t, s, "puppy grooming palace") {
		if h.ID == added.ID {
			t.Error("a removed name is still found")
		}
	}
	if _, err := s.Search(ctx, models.EnvSandbox, "  "); codeOf(err) != fault.Validation {
		t.Errorf("empty query = %v, want validation_error", err)
	}
}

func mustSearch(t *testing.T, s *Service, q string) []Hit {
	t.Helper()
	hits, err := s.Search(context.Background(), models.EnvSandbox, q)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

func TestAddRefusesBadListings(t *testing.T) {
	t.Parallel()
	s := New(modelstest.NewDB(t), testKey, time.Now)
	t.Cleanup(s.Close)
	ctx := context.Background()
	s.Add(ctx, models.EnvLive, "taken.com", cents(100), nil)
	for name, tc := range map[string]struct {
		env, domain string
		bin, floor  *int64
		code        fault.Code
	}{
		"not a name":      {models.EnvLive, "not a name", nil, nil, fault.Validation},
		"below the label": {models.EnvLive, "www.example.com", nil, nil, fault.Validation},
		"zero price":      {models.EnvLive, "a.com", cents(0), nil, fault.Validation},
		"floor over bin":  {models.EnvLive, "b.com", cents(100), cents(200), fault.Validation},
		"environment":     {"staging", "c.com", nil, nil, fault.Validation},
		"listed already":  {models.EnvLive, "TAKEN.com", cents(5), nil, fault.Conflict},
	} {
		if _, err := s.Add(ctx, tc.env, tc.domain, tc.bin, tc.floor); codeOf(err) != tc.code {
			t.Errorf("%s: %v, want %s", name, err, tc.code)
		}
	}
}

// A sold listing cannot be withdrawn: its order names it, and the name
// would be listed and sold again.
func TestASoldListingIsNotRemoved(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s, db := newInventory(t, &now)
	ctx := context.Background()
	for _, env := range []string{models.EnvSandbox, models.EnvLive} {
		sold, err := s.Add(ctx, env, "soldalready-"+env+".com", cents(50000), nil)
		if err != nil {
			t.Fatal(err)
		}
		model, _ := listingModel(env)
		db.Model(model).Where("id = ?", sold.ID).Update("sold_at", now)
		if err := s.Remove(ctx, env, sold.ID); codeOf(err) != fault.NotFound {
			t.Errorf("%s: removing a sold listing = %v, want not_found", env, err)
		}
		var left int64
		db.Model(model).Where("id = ?", sold.ID).Count(&left)
		if left != 1 {
			t.Errorf("%s: the sold listing was deleted", env)
		}
	}
}
