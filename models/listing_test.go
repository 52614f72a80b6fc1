package models_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// The marketplace's counters agree with a count after every kind of write.
func TestPublicListingCountsStayExact(t *testing.T) {
	db := modelstest.NewDB(t)
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
}
