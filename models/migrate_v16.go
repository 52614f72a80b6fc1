package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 16: hosted checkout sessions.

type checkoutSessionV16 struct {
	ID          string    `gorm:"primaryKey;size:40"`
	PartnerID   string    `gorm:"size:40;not null;index"`
	Environment string    `gorm:"size:8;not null"`
	ListingID   string    `gorm:"size:36;not null"`
	Domain      string    `gorm:"size:253;not null"`
	ReturnURL   string    `gorm:"size:2000;not null"`
	CancelURL   string    `gorm:"size:2000;not null"`
	BuyerEmail  string    `gorm:"size:254;not null"`
	ExpiresAt   time.Time `gorm:"not null"`
	Declines    int       `gorm:"not null;default:0"`
	OrderID     *string   `gorm:"size:40;uniqueIndex"`
	ChargeID    string    `gorm:"size:200"`
	CardLast4   string    `gorm:"size:4"`
	PaidAt      *time.Time
	CreatedAt   time.Time
}

func (checkoutSessionV16) TableName() string { return "checkout_sessions" }

func migrateV16(tx *gorm.DB) error { return tx.AutoMigrate(&checkoutSessionV16{}) }
