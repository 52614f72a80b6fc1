package inventory

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// Two API replicas on one database and Redis: a listing added or removed
// through one is found, or no longer found, by the other's search, whose
// index would not be rebuilt for minutes (its clock stands still).
func TestChangesReachAnotherReplica(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	r := platformtest.NewRedis(t)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	replica := func() *Service {
		s := New(db, testKey, func() time.Time { return now })
		s.Share(r.Client, slog.New(slog.DiscardHandler))
		t.Cleanup(s.Close)
		return s
	}
	a, b := replica(), replica()
	ctx := context.Background()
	if _, err := a.Add(ctx, models.EnvSandbox, "petwash.shop", cents(50000), nil); err != nil {
		t.Fatal(err)
	}
	if hits := mustSearch(t, b, "dog washing"); len(hits) != 1 { // b builds its index now
		t.Fatalf("b's first search = %+v, want the one listing", hits)
	}
	waitFor := func(what string, ok func([]string) bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			var domains []string
			for _, h := range mustSearch(t, b, "sofa shop") {
				domains = append(domains, h.Domain)
			}
			if ok(domains) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: b finds %v, its index holds %d entries", what, domains, indexLen(b, models.EnvSandbox))
			}
		}
	}
	added, err := a.Add(ctx, models.EnvSandbox, "couchstore.com", cents(90000), nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor("a listing added through a", func(d []string) bool { return slices.Contains(d, "couchstore.com") })
	if err := a.Remove(ctx, models.EnvSandbox, added.ID); err != nil {
		t.Fatal(err)
	}
	// Search leaves out what the database no longer holds, so the removal
	// is only through once b's index has let go of it too.
	waitFor("a listing removed through a", func(d []string) bool {
		return !slices.Contains(d, "couchstore.com") && indexLen(b, models.EnvSandbox) == 1
	})
}

// indexLen is the number of entries in s's index of env.
func indexLen(s *Service, env string) int {
	s.mu.Lock()
	b := s.indexes[env]
	s.mu.Unlock()
	return b.ix.Len()
}

// A change applied while an index is being built (after its read of the
// database) is in the index that serves after the build.
func TestChangesDuringABuildAreKept(t *testing.T) {
	t.Parallel()
	s := New(modelstest.NewDB(t), testKey, time.Now)
	t.Cleanup(s.Close)
	s.afterLoad = func() { s.apply(change{Env: models.EnvSandbox, ID: "lst_late", Domain: "couchstore.com"}) }
	ix, err := s.build(context.Background(), models.EnvSandbox)
	if err != nil {
		t.Fatal(err)
	}
	if found := ix.Search("couch store", 5); len(found) != 1 || found[0].ID != "lst_late" {
		t.Errorf("the built index finds %+v, want the change made during the build", found)
	}
	if _, building := s.pending[models.EnvSandbox]; building {
		t.Error("the build left its pending changes behind")
	}
}

// A sold listing is left out of the results and the next one takes its
// place: the index holds every listing, search answers those for sale.
func TestSearchSkipsWhatIsNotForSale(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	s := New(db, testKey, time.Now)
	t.Cleanup(s.Close)
	ctx := context.Background()
	var sold Item
	for i, d := range []string{"puppygrooming.com", "puppygroomers.net", "puppyspa.io", "groompuppies.co", "puppygroom.shop", "puppygroomingpro.app"} {
		it, err := s.Add(ctx, models.EnvSandbox, d, cents(50000), nil)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			sold = it
		}
	}
	if err := db.Model(&models.SandboxListing{}).Where("id = ?", sold.ID).Update("sold_at", time.Now()).Error; err != nil {
		t.Fatal(err)
	}
	hits := mustSearch(t, s, "puppy grooming")
	if len(hits) != MaxResults {
		t.Errorf("search = %d hits, want %d: the sold one's place taken by the next", len(hits), MaxResults)
	}
	for _, h := range hits {
		if h.ID == sold.ID {
			t.Errorf("a sold listing is found: %+v", h)
		}
	}
}
