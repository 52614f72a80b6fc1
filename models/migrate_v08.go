package models

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Step 8 as released (0d7c9de, which rewrote the step of 64cd57d in place:
// the sort keys became generated columns): the price sort keys of the
// listings, the indexes of the marketplace's orders and, on Postgres, the
// trigram index of its name search.

// listingV8 is the listings table with the columns step 8 adds.
type listingV8 struct {
	ID                 string `gorm:"primaryKey;size:36"`
	Domain             string `gorm:"size:253;not null;uniqueIndex"`
	TLD                string `gorm:"size:63;not null;index"`
	BINCents           *int64
	FloorCents         *int64
	Currency           string    `gorm:"size:3;not null"`
	Approved           bool      `gorm:"not null;default:false"`
	MarketplaceVisible bool      `gorm:"not null;default:false"`
	CreatedAt          time.Time `gorm:"index"`
	LockedUntil        *time.Time
	SortPriceAsc       int64 `gorm:"->;type:bigint GENERATED ALWAYS AS (COALESCE(bin_cents, 9223372036854775807)) STORED"`
	SortPriceDesc      int64 `gorm:"->;type:bigint GENERATED ALWAYS AS (COALESCE(bin_cents, -1)) STORED"`
}

func (listingV8) TableName() string { return "listings" }

// listingIndexes serve the marketplace's three orders over the public
// listings, each ending with id so that ties have one order (keyset
// pagination needs a total order).
var listingIndexes = []string{
	`CREATE INDEX IF NOT EXISTS idx_listings_public_newest ON listings (created_at DESC, id DESC) WHERE approved AND marketplace_visible`,
	`CREATE INDEX IF NOT EXISTS idx_listings_public_price_asc ON listings (sort_price_asc, id) WHERE approved AND marketplace_visible`,
	`CREATE INDEX IF NOT EXISTS idx_listings_public_price_desc ON listings (sort_price_desc DESC, id DESC) WHERE approved AND marketplace_visible`,
	`CREATE INDEX IF NOT EXISTS idx_listings_public_tld_newest ON listings (tld, created_at DESC, id DESC) WHERE approved AND marketplace_visible`,
}

func migrateV8(tx *gorm.DB) error {
	hasKeys, err := hasColumn(tx, "listings", "sort_price_asc")
	if err != nil {
		return err
	}
	switch {
	case hasKeys:
	case IsPostgres(tx):
		if err := addColumns(tx, &listingV8{}, "SortPriceAsc", "SortPriceDesc"); err != nil {
			return err
		}
	default: // SQLite cannot add a stored generated column to a table
		if err := rebuildSQLiteTable(tx, &listingV8{}); err != nil {
			return err
		}
	}
	if err := execAll(tx, listingIndexes); err != nil {
		return err
	}
	return createListingSearchIndex(tx)
}

// createListingSearchIndex makes, on Postgres, the trigram index that
// serves substring search on names (q).
func createListingSearchIndex(tx *gorm.DB) error {
	if !IsPostgres(tx) {
		return nil
	}
	if err := tx.Exec(`CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public`).Error; err != nil {
		return fmt.Errorf("the marketplace's name search needs the pg_trgm extension: %w", err)
	}
	return tx.Exec(`CREATE INDEX IF NOT EXISTS idx_listings_domain_trgm ON listings USING gin (domain public.gin_trgm_ops)`).Error
}
