package inventory

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/pagecursor/pagecursortest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

var testKey = []byte("test-secret-key-0123456789abcdef")

// wantInvalid fails unless err is a validation error naming field.
func wantInvalid(t *testing.T, what string, err error, field string) {
	t.Helper()
	if e, ok := fault.As(err); !ok || e.Code != fault.Validation || e.Field != field {
		t.Errorf("%s = %v, want a validation error naming %s", what, err, field)
	}
}

// Ops page through an environment's listings newest first, sold ones
// included, filtered by a part of the name; a cursor of another filter is
// refused.
func TestListPagesNewestFirst(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s, db := newInventory(t, &now)
	ctx := context.Background()
	for i := range 5 {
		now = now.Add(time.Minute)
		if _, err := s.Add(ctx, models.EnvSandbox, fmt.Sprintf("harbor%d.com", i), cents(1000), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Add(ctx, models.EnvSandbox, "other.net", nil, nil); err != nil {
		t.Fatal(err)
	}
	db.Model(&models.SandboxListing{}).Where("domain = ?", "harbor4.com").Update("sold_at", now)
	page, next, err := s.List(ctx, models.EnvSandbox, "HARBOR", "", 3)
	if err != nil || len(page) != 3 || next == "" || page[0].Domain != "harbor4.com" || page[0].SoldAt == nil || page[2].Domain != "harbor2.com" {
		t.Fatalf("first page = %+v, %q, %v", page, next, err)
	}
	rest, last, err := s.List(ctx, models.EnvSandbox, "HARBOR", next, 3)
	if err != nil || len(rest) != 2 || last != "" || rest[1].Domain != "harbor0.com" || rest[1].SoldAt != nil || *rest[1].BINCents != 1000 {
		t.Errorf("second page = %+v, %q, %v", rest, last, err)
	}
	if _, _, err := s.List(ctx, models.EnvSandbox, "other", next, 3); !isInvalidCursor(err) {
		t.Errorf("a cursor of another filter = %v, want invalid_cursor", err)
	}
	if live, _, err := s.List(ctx, models.EnvLive, "", "", 10); err != nil || len(live) != 0 {
		t.Errorf("the live inventory = %+v, %v; want none", live, err)
	}
}

func isInvalidCursor(err error) bool {
	e, ok := fault.As(err)
	return ok && e.Code == fault.InvalidCursor
}

// Prices change on an unsold listing only, with Add's rules.
func TestSetPrices(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	s := New(db, testKey, time.Now)
	t.Cleanup(s.Close)
	ctx := context.Background()
	it, err := s.Add(ctx, models.EnvLive, "repriced.com", cents(50_000), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetPrices(ctx, models.EnvLive, it.ID, cents(40_000), cents(30_000)); err != nil {
		t.Fatal(err)
	}
	var l models.Listing
	db.Take(&l, "id = ?", it.ID)
	if *l.BINCents != 40_000 || *l.FloorCents != 30_000 {
		t.Errorf("prices after = %d, %d", *l.BINCents, *l.FloorCents)
	}
	wantInvalid(t, "a floor above the price", s.SetPrices(ctx, models.EnvLive, it.ID, cents(40_000), cents(50_000)), "floor_cents")
	wantInvalid(t, "a price of 0", s.SetPrices(ctx, models.EnvLive, it.ID, cents(0), nil), "bin_cents")
	db.Model(&models.Listing{}).Where("id = ?", it.ID).Update("sold_at", time.Now())
	if e, ok := fault.As(s.SetPrices(ctx, models.EnvLive, it.ID, cents(1), nil)); !ok || e.Code != fault.NotFound {
		t.Errorf("pricing a sold listing = %v, want not_found", e)
	}
	if db.Take(&l, "id = ?", it.ID); *l.BINCents != 40_000 {
		t.Errorf("a refused change moved the price to %d", *l.BINCents)
	}
}

// An import lists every good line and reports the others by line; a file
// that is not the CSV, or too long, lists nothing.
func TestImport(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	s := New(db, testKey, time.Now)
	t.Cleanup(s.Close)
	ctx := context.Background()
	if _, err := s.Add(ctx, models.EnvSandbox, "taken.com", nil, nil); err != nil {
		t.Fatal(err)
	}
	res, err := s.Import(ctx, models.EnvSandbox, strings.NewReader("domain,bin_cents,floor_cents\n"+
		"first.com,120000,90000\nsecond.io,,\nnot a name,100,\ntaken.com,100,\nthird.shop,12.50,\nfourth.dev,100,200\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []ImportFailure{{4, "not a name", ""}, {5, "taken.com", ""}, {6, "third.shop", ""}, {7, "fourth.dev", ""}}
	if res.Added != 2 || len(res.Failed) != len(want) {
		t.Fatalf("import = %+v, want 2 added and lines 4-7 failed", res)
	}
	for i, f := range res.Failed {
		if f.Line != want[i].Line || f.Domain != want[i].Domain || f.Problem == "" {
			t.Errorf("failure %d = %+v, want line %d (%s) with its reason", i, f, want[i].Line, want[i].Domain)
		}
	}
	var n int64
	db.Model(&models.SandboxListing{}).Count(&n)
	if n != 3 {
		t.Errorf("%d listings after the import, want 3", n)
	}
	for name, file := range map[string]string{
		"no header":     "first.com,1,\n",
		"two columns":   "domain,bin_cents,floor_cents\nfirst.com,1\n",
		"too many":      "domain,bin_cents,floor_cents\n" + strings.Repeat("x.com,,\n", MaxImportLines+1),
		"an empty file": "",
	} {
		if _, err := s.Import(ctx, models.EnvSandbox, strings.NewReader(file)); err == nil {
			t.Errorf("%s: imported", name)
		} else {
			wantInvalid(t, name, err, "file")
		}
	}
	if db.Model(&models.SandboxListing{}).Count(&n); n != 3 {
		t.Errorf("refused files listed names: %d listings", n)
	}
}

// A page in the middle of the sandbox's listings reads about its own
// rows: the listings' creation is indexed, as the live listings' is.
func TestListMiddlePageReadsItsOwnRows(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	if !models.IsPostgres(db) {
		t.Skip("reads Postgres's plan; the paging itself is TestListPagesNewestFirst")
	}
	s := New(db, testKey, time.Now)
	t.Cleanup(s.Close)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var listings []models.SandboxListing
	for i := range 3000 {
		listings = append(listings, models.SandboxListing{ID: fmt.Sprintf("lst_%05d", i), Domain: fmt.Sprintf("n%05d.com", i), TLD: "com",
			BINCents: cents(1000), Currency: "USD", CreatedAt: start.Add(time.Duration(i/2) * time.Second)})
	}
	if err := db.CreateInBatches(listings, 1000).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("ANALYZE sandbox_listings").Error; err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, cursors := pagecursortest.Walk(t, func(cursor string) ([]Managed, string, error) {
		return s.List(ctx, models.EnvSandbox, "", cursor, 100)
	})
	// The page and the next one's first, the rest of the cursor's second
	// and the whole of the page's last second: 105.
	read := modelstest.RowsReadBy(t, db, `FROM "sandbox_listings"`, func() error {
		_, _, err := s.List(ctx, models.EnvSandbox, "", cursors[len(cursors)/2], 100)
		return err
	})
	if read > 110 {
		t.Errorf("a page of 100 in the middle of the listings read %v rows; want at most 110", read)
	}
}
