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
