package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 6 as released (bb9a936): developer keys, and the sale lock of a
// listing.

type apiKeyV6 struct {
	ID         string `gorm:"primaryKey;size:40"`
	UserID     string `gorm:"size:36;not null;index"`
	Name       string `gorm:"size:100;not null"`
	SecretHash string `gorm:"size:64;not null"`
	CreatedAt  time.Time
	RevokedAt  *time.Time
}

func (apiKeyV6) TableName() string { return "api_keys" }

// listingV6 holds the column step 6 adds to the listings of step 3.
type listingV6 struct {
	LockedUntil *time.Time
}

func (listingV6) TableName() string { return "listings" }

func migrateV6(tx *gorm.DB) error {
	if err := tx.AutoMigrate(&apiKeyV6{}); err != nil {
		return err
	}
	return addColumns(tx, &listingV6{}, "LockedUntil")
}
