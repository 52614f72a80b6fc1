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

	// The keys of the price sorts, computed by the database from the
	// buy-now price whatever writes it, with listings that have none after
	// all priced ones in both directions (NoPriceAsc, NoPriceDesc).
	// Non-null keys make keyset pagination simple and indexable.
	SortPriceAsc  int64 `gorm:"->;type:bigint GENERATED ALWAYS AS (COALESCE(bin_cents, 9223372036854775807)) STORED"`
	SortPriceDesc int64 `gorm:"->;type:bigint GENERATED ALWAYS AS (COALESCE(bin_cents, -1)) STORED"`
}

// NoPriceAsc and NoPriceDesc are the sort keys of a listing without a
// buy-now price: last in either order.
const (
	NoPriceAsc  = math.MaxInt64
	NoPriceDesc = -1
)

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
// total (under the empty TLD) and per TLD, exact and transactional, as
// signed deltas: every write appends rows (tld, ±n) and never updates one,
// so writers do not queue on a counter row or deadlock over it; a count is
// the sum of a TLD's rows, and CompactListingCounts folds them now and then.
// Inserts and deletes add one delta per TLD per statement; an update adds
// deltas only when it changes what is counted (approval, visibility, TLD).
var listingCountsDDL = []string{
	`CREATE TABLE IF NOT EXISTS listing_count_deltas (id bigserial PRIMARY KEY, tld varchar(63) NOT NULL, n bigint NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS idx_listing_count_deltas_tld ON listing_count_deltas (tld)`,
	`CREATE OR REPLACE FUNCTION listing_counts_statement() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF TG_OP = 'INSERT' THEN
			INSERT INTO listing_count_deltas (tld, n)
				SELECT v.t, count(*) FROM new_rows, LATERAL (VALUES (''), (new_rows.tld)) v(t)
				WHERE approved AND marketplace_visible GROUP BY v.t;
		ELSIF TG_OP = 'DELETE' THEN
			INSERT INTO listing_count_deltas (tld, n)
				SELECT v.t, -count(*) FROM old_rows, LATERAL (VALUES (''), (old_rows.tld)) v(t)
				WHERE approved AND marketplace_visible GROUP BY v.t;
		ELSE -- TRUNCATE
			DELETE FROM listing_count_deltas;
		END IF;
		RETURN NULL;
	END $$`,
	`CREATE OR REPLACE FUNCTION listing_counts_row() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF OLD.approved AND OLD.marketplace_visible THEN
			INSERT INTO listing_count_deltas (tld, n) VALUES ('', -1), (OLD.tld, -1);
		END IF;
		IF NEW.approved AND NEW.marketplace_visible THEN
			INSERT INTO listing_count_deltas (tld, n) VALUES ('', 1), (NEW.tld, 1);
		END IF;
		RETURN NULL;
	END $$`,
	`DROP TRIGGER IF EXISTS listing_counts_insert ON listings`,
	`CREATE TRIGGER listing_counts_insert AFTER INSERT ON listings REFERENCING NEW TABLE AS new_rows
		FOR EACH STATEMENT EXECUTE FUNCTION listing_counts_statement()`,
	`DROP TRIGGER IF EXISTS listing_counts_delete ON listings`,
	`CREATE TRIGGER listing_counts_delete AFTER DELETE ON listings REFERENCING OLD TABLE AS old_rows
		FOR EACH STATEMENT EXECUTE FUNCTION listing_counts_statement()`,
	`DROP TRIGGER IF EXISTS listing_counts_truncate ON listings`,
	`CREATE TRIGGER listing_counts_truncate AFTER TRUNCATE ON listings
		FOR EACH STATEMENT EXECUTE FUNCTION listing_counts_statement()`,
	`DROP TRIGGER IF EXISTS listing_counts_update ON listings`,
	`CREATE TRIGGER listing_counts_update AFTER UPDATE OF approved, marketplace_visible, tld ON listings FOR EACH ROW
		WHEN (OLD.approved IS DISTINCT FROM NEW.approved OR OLD.marketplace_visible IS DISTINCT FROM NEW.marketplace_visible
		      OR OLD.tld IS DISTINCT FROM NEW.tld)
		EXECUTE FUNCTION listing_counts_row()`,
	`DELETE FROM listing_count_deltas`,
	`INSERT INTO listing_count_deltas (tld, n)
		SELECT '', count(*) FROM listings WHERE approved AND marketplace_visible
		UNION ALL SELECT tld, count(*) FROM listings WHERE approved AND marketplace_visible GROUP BY tld`,
}

// CompactListingCounts folds each TLD's count deltas into one row, in one
// statement (writers that commit meanwhile keep their rows for next time).
// A no-op off Postgres.
func CompactListingCounts(db *gorm.DB) error {
	if !IsPostgres(db) {
		return nil
	}
	return db.Exec(`WITH gone AS (DELETE FROM listing_count_deltas RETURNING tld, n)
		INSERT INTO listing_count_deltas (tld, n) SELECT tld, sum(n) FROM gone GROUP BY tld`).Error
}

// CountPublicListings returns how many approved, visible listings there
// are, under tld when it is not empty: on Postgres from the deltas the
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
	err := db.Raw(`SELECT COALESCE(sum(n), 0) FROM listing_count_deltas WHERE tld = ?`, tld).Scan(&n).Error
	return n, err
}
