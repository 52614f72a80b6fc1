package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 27: when a partner's quotes of a listing began to hold it, so that
// re-quoting extends a hold only up to a bound from then.

type listingV27 struct {
	HeldSince *time.Time
}

func (listingV27) TableName() string { return "listings" }

type sandboxListingV27 struct {
	HeldSince *time.Time
}

func (sandboxListingV27) TableName() string { return "sandbox_listings" }

func migrateV27(tx *gorm.DB) error {
	if err := addColumns(tx, &listingV27{}, "HeldSince"); err != nil {
		return err
	}
	return addColumns(tx, &sandboxListingV27{}, "HeldSince")
}
