package models

import "time"

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
}

// Locked reports whether the listing is held by a sale in progress at now.
func (l Listing) Locked(now time.Time) bool { return l.LockedUntil != nil && l.LockedUntil.After(now) }
