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
	// HeldBy is the partner whose quote holds the listing until
	// LockedUntil, and HeldSession the checkout session of theirs paying
	// for it, if one is: while a session pays, neither another session
	// nor the partner's own order can sell the name.
	HeldBy      *string `gorm:"size:40"`
	HeldSession *string `gorm:"size:40"`
	// HeldSince is when HeldBy's quotes of the listing began to hold it:
	// re-quoting extends a hold up to a bound from then.
	HeldSince *time.Time
	// SoldAt is when a partner order bought it (it is hidden from the
	// marketplace then); a refund puts it back on sale.
	SoldAt *time.Time

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

// PublicListings scopes a query of listings to those the marketplace
// shows: approved and visible (a sale hides a listing, a refund shows it
// again). Use it with gorm's Scopes; the Postgres counters of
// CountPublicListings count the same rows.
func PublicListings(db *gorm.DB) *gorm.DB {
	return db.Model(&Listing{}).Where(PublicListingSQL)
}

// PublicListingSQL is PublicListings' condition, for statements written
// out.
const PublicListingSQL = "approved AND marketplace_visible"

// ShownOrSoldListings scopes a query of listings to the public ones and
// those sold from the marketplace: the names a partner order or a name's
// page may find.
func ShownOrSoldListings(db *gorm.DB) *gorm.DB {
	return db.Model(&Listing{}).Where("approved AND (marketplace_visible OR sold_at IS NOT NULL)")
}

// Locked reports whether the listing is held by a sale in progress at now.
func (l Listing) Locked(now time.Time) bool { return l.LockedUntil != nil && l.LockedUntil.After(now) }

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
		q := db.Scopes(PublicListings)
		if tld != "" {
			q = q.Where("tld = ?", tld)
		}
		return n, q.Count(&n).Error
	}
	err := db.Raw(`SELECT COALESCE(sum(n), 0) FROM listing_count_deltas WHERE tld = ?`, tld).Scan(&n).Error
	return n, err
}
