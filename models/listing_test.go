package models_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// The marketplace's counters (Postgres) agree with a count after every kind
// of write, concurrent ones included, and after compaction.
func TestPublicListingCountsStayExact(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	if !models.IsPostgres(db) {
		t.Skip("the counters are Postgres triggers; elsewhere CountPublicListings counts")
	}
	check := func(when string) {
		t.Helper()
		for _, tld := range []string{"", "com", "io"} {
			var want int64
			q := db.Model(&models.Listing{}).Where("approved AND marketplace_visible")
			if tld != "" {
				q = q.Where("tld = ?", tld)
			}
			q.Count(&want)
			got, err := models.CountPublicListings(db, tld)
			if err != nil || got != want {
				t.Errorf("%s: count of %q = %d, %v; want %d", when, tld, got, err, want)
			}
		}
	}
	check("empty")
	var rows []models.Listing
	for i := range 50 {
		tld := []string{"com", "io", "net"}[i%3]
		rows = append(rows, models.Listing{ID: models.NewID(), Domain: fmt.Sprintf("n%d.%s", i, tld), TLD: tld, Currency: "USD",
			Approved: i%5 != 0, MarketplaceVisible: i%7 != 0})
	}
	if err := db.CreateInBatches(rows, 20).Error; err != nil {
		t.Fatal(err)
	}
	check("after a bulk insert")
	db.Model(&models.Listing{}).Where("tld = ?", "com").Update("approved", true)
	check("after approving")
	db.Model(&models.Listing{}).Where("domain = ?", "n1.io").Update("tld", "com")
	check("after moving a listing to another TLD")
	db.Model(&models.Listing{}).Where("tld = ?", "io").Update("marketplace_visible", false)
	check("after hiding")
	db.Model(&models.Listing{}).Where("1 = 1").Update("locked_until", time.Now())
	check("after an update that changes no count")
	db.Where("tld = ?", "com").Delete(&models.Listing{})
	check("after deleting")

	// Writers in concurrent transactions, each on its own listings but all
	// on the same counters: no waiting on each other, no count lost.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for w := range 8 {
		wg.Go(func() {
			errs[w] = db.Transaction(func(tx *gorm.DB) error {
				for i := range 10 {
					domain := fmt.Sprintf("w%d-%d.io", w, i)
					if err := tx.Create(&models.Listing{ID: models.NewID(), Domain: domain, TLD: "io",
						Currency: "USD", Approved: true, MarketplaceVisible: true}).Error; err != nil {
						return err
					}
					if i%2 == 0 { // and some withdrawn again in the same transaction
						if err := tx.Model(&models.Listing{}).Where("domain = ?", domain).Update("approved", false).Error; err != nil {
							return err
						}
					}
				}
				return nil
			})
		})
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", w, err)
		}
	}
	check("after concurrent writers")
	if err := models.CompactListingCounts(db); err != nil {
		t.Fatal(err)
	}
	var deltas int64
	db.Table("listing_count_deltas").Count(&deltas)
	if deltas > 4 {
		t.Errorf("%d delta rows after compaction, want one per TLD", deltas)
	}
	check("after compaction")
	db.Exec("TRUNCATE listings")
	check("after truncate")
}

// The price sort keys follow the price however it is written.
func TestListingSortKeysFollowThePrice(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	bin := int64(250000)
	l := models.Listing{ID: models.NewID(), Domain: "keys.com", TLD: "com", Currency: "USD", BINCents: &bin}
	if err := db.Create(&l).Error; err != nil {
		t.Fatal(err)
	}
	keys := func() (int64, int64) {
		var got models.Listing
		db.Take(&got, "id = ?", l.ID)
		return got.SortPriceAsc, got.SortPriceDesc
	}
	if asc, desc := keys(); asc != 250000 || desc != 250000 {
		t.Errorf("keys after create = %d/%d, want 250000", asc, desc)
	}
	db.Model(&models.Listing{}).Where("id = ?", l.ID).Update("bin_cents", 5)
	if asc, desc := keys(); asc != 5 || desc != 5 {
		t.Errorf("keys after Update = %d/%d, want 5", asc, desc)
	}
	db.Exec("UPDATE listings SET bin_cents = NULL WHERE id = ?", l.ID)
	if asc, desc := keys(); asc != models.NoPriceAsc || desc != models.NoPriceDesc {
		t.Errorf("keys without a price = %d/%d, want last in both orders", asc, desc)
	}
}
