package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 3 as released (81f976f): lookups, the RDAP bootstrap and the first
// marketplace listings (steps 6 and 8 add to them).

type lookupV3 struct {
	ID          string    `gorm:"primaryKey;size:36"`
	Domain      string    `gorm:"size:253;not null;index"`
	State       string    `gorm:"size:16;not null"`
	Record      string    // domaininfo.Record as JSON
	Error       string    `gorm:"size:500"`
	RequestID   string    `gorm:"size:64"`
	Attempts    int       `gorm:"not null;default:0"`
	CreatedAt   time.Time `gorm:"index"`
	CompletedAt *time.Time
}

func (lookupV3) TableName() string { return "lookups" }

type rdapBootstrapV3 struct {
	ID          int `gorm:"primaryKey;autoIncrement:false"`
	Data        []byte
	Publication time.Time
	FetchedAt   time.Time
}

func (rdapBootstrapV3) TableName() string { return "rdap_bootstraps" }

type listingV3 struct {
	ID                 string `gorm:"primaryKey;size:36"`
	Domain             string `gorm:"size:253;not null;uniqueIndex"`
	TLD                string `gorm:"size:63;not null;index"`
	BINCents           *int64
	FloorCents         *int64
	Currency           string    `gorm:"size:3;not null"`
	Approved           bool      `gorm:"not null;default:false"`
	MarketplaceVisible bool      `gorm:"not null;default:false"`
	CreatedAt          time.Time `gorm:"index"`
}

func (listingV3) TableName() string { return "listings" }

func migrateV3(tx *gorm.DB) error {
	return tx.AutoMigrate(&lookupV3{}, &rdapBootstrapV3{}, &listingV3{})
}
