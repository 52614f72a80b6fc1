package models

import (
	"math"
	"time"

	"gorm.io/gorm"
)

// Listing is a domain offered in the marketplace (aftermarket). Prices are
// USD cents; nil means the seller set none. Only approved, visible listings
// are shown to the public.
type Listing struct {
	ID                 string `gorm:"primaryKey;size:36"`
	Domain             string `gorm:"size:253;not null;uniqueIndex"`
	TLD                string `gorm:"size:63;not null;index"`
	BINCents           *int64
	FloorCents         *int64
	Currency           string    `gorm:"size:3;not null"`
	Approved           bool      `gorm:"not null;default:false"`
	MarketplaceVisible bool      `gorm:"not null;default:false"`
	CreatedAt          time.Time `gorm:"index"`
	// LockedUntil holds the name for a sale in progress (a quote's
	// reservation, an order being completed); it is not for sale meanwhile.
	LockedUntil *time.Time

	// The keys of the price sorts, kept by BeforeSave: the buy-now price,
	// with listings that have none after all priced ones in both
	// directions. Non-null keys make keyset pagination simple and indexable.
	SortPriceAsc  int64 `gorm:"not null;default:0"`
	SortPriceDesc int64 `gorm:"not null;default:0"`
}

// NoPriceAsc and NoPriceDesc are the sort keys of a listing without a
// buy-now price: last in either order.
const (
	NoPriceAsc  = math.MaxInt64
	NoPriceDesc = -1
)

// BeforeSave keeps the sort keys in step with the price.
func (l *Listing) BeforeSave(*gorm.DB) error {
	l.SortPriceAsc, l.SortPriceDesc = NoPriceAsc, NoPriceDesc
	if l.BINCents != nil {
		l.SortPriceAsc, l.SortPriceDesc = *l.BINCents, *l.BINCents
	}
	return nil
}

// Locked reports whether the listing is held by a sale in progress at now.
func (l Listing) Locked(now time.Time) bool { return l.LockedUntil != nil && l.LockedUntil.After(now) }

// listingIndexes serve the marketplace's three orders over the public
// listings, each ending with id so that ties have one order (keyset
// pagination needs a total order).
var listingIndexes = []string{
	`CREATE INDEX IF NOT EXISTS idx_listings_public_newest ON listings (created_at DESC, id DESC) WHERE approved AND marketplace_visible`,
	`CREATE INDEX IF NOT EXISTS idx_listings_public_price_asc ON listings (sort_price_asc, id) WHERE approved AND marketplace_visible`,
	`CREATE INDEX IF NOT EXISTS idx_listings_public_price_desc ON listings (sort_price_desc DESC, id DESC) WHERE approved AND marketplace_visible`,
	`CREATE INDEX IF NOT EXISTS idx_listings_public_tld_newest ON listings (tld, created_at DESC, id DESC) WHERE approved AND marketplace_visible`,
}

// listingCountsDDL keeps, on Postgres, the number of public listings in
// total (under the empty TLD) and per TLD, exact and transactional: statement-level
// triggers fold each statement's rows into the counters, so a bulk insert
// costs one upsert per TLD, not per row. The marketplace's totals then
// cost a lookup instead of a count over every listing.
var listingCountsDDL = []string{
	`CREATE TABLE IF NOT EXISTS listing_counts (tld varchar(63) PRIMARY KEY, n bigint NOT NULL)`,
	`CREATE OR REPLACE FUNCTION listing_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF TG_OP = 'INSERT' THEN
			INSERT INTO listing_counts (tld, n)
				SELECT v.t, count(*) FROM new_rows, LATERAL (VALUES (''), (new_rows.tld)) v(t)
				WHERE approved AND marketplace_visible GROUP BY v.t ORDER BY v.t
				ON CONFLICT (tld) DO UPDATE SET n = listing_counts.n + EXCLUDED.n;
		ELSIF TG_OP = 'DELETE' THEN
			INSERT INTO listing_counts (tld, n)
				SELECT v.t, -count(*) FROM old_rows, LATERAL (VALUES (''), (old_rows.tld)) v(t)
				WHERE approved AND marketplace_visible GROUP BY v.t ORDER BY v.t
				ON CONFLICT (tld) DO UPDATE SET n = listing_counts.n + EXCLUDED.n;
		ELSE
			INSERT INTO listing_counts (tld, n)
				SELECT t, sum(d) FROM (
					SELECT v.t, 1 AS d FROM new_rows, LATERAL (VALUES (''), (new_rows.tld)) v(t) WHERE approved AND marketplace_visible
					UNION ALL
					SELECT v.t, -1 FROM old_rows, LATERAL (VALUES (''), (old_rows.tld)) v(t) WHERE approved AND marketplace_visible
				) deltas GROUP BY t HAVING sum(d) <> 0 ORDER BY t
				ON CONFLICT (tld) DO UPDATE SET n = listing_counts.n + EXCLUDED.n;
		END IF;
		RETURN NULL;
	END $$`,
	`DROP TRIGGER IF EXISTS listing_counts_insert ON listings`,
	`CREATE TRIGGER listing_counts_insert AFTER INSERT ON listings REFERENCING NEW TABLE AS new_rows
		FOR EACH STATEMENT EXECUTE FUNCTION listing_counts_apply()`,
	`DROP TRIGGER IF EXISTS listing_counts_update ON listings`,
	`CREATE TRIGGER listing_counts_update AFTER UPDATE ON listings REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
		FOR EACH STATEMENT EXECUTE FUNCTION listing_counts_apply()`,
	`DROP TRIGGER IF EXISTS listing_counts_delete ON listings`,
	`CREATE TRIGGER listing_counts_delete AFTER DELETE ON listings REFERENCING OLD TABLE AS old_rows
		FOR EACH STATEMENT EXECUTE FUNCTION listing_counts_apply()`,
	`DELETE FROM listing_counts`,
	`INSERT INTO listing_counts (tld, n)
		SELECT '', count(*) FROM listings WHERE approved AND marketplace_visible
		UNION ALL SELECT tld, count(*) FROM listings WHERE approved AND marketplace_visible GROUP BY tld`,
}

// CountPublicListings returns how many approved, visible listings there
// are, under tld when it is not empty: on Postgres from the counters the
// triggers of listingCountsDDL keep, elsewhere (the embedded SQLite, with
// its demo-sized marketplace) by counting.
func CountPublicListings(db *gorm.DB, tld string) (int64, error) {
	var n int64
	if !IsPostgres(db) {
		q := db.Model(&Listing{}).Where("approved AND marketplace_visible")
		if tld != "" {
			q = q.Where("tld = ?", tld)
		}
		return n, q.Count(&n).Error
	}
	err := db.Raw(`SELECT COALESCE((SELECT n FROM listing_counts WHERE tld = ?), 0)`, tld).Scan(&n).Error
	return n, err
}
