package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 2 as released (080f7a0): TLDs and their prices, the sandbox
// registry's TLDs and names. JSON columns (serializer:json in the models)
// are plain text here: that is all the schema sees of them.

type tldV2 struct {
	Name         string `gorm:"primaryKey;size:63"`
	Source       string `gorm:"size:16;not null"`
	Metadata     string `gorm:"not null"` // registry.Metadata as JSON
	Unavailable  bool   `gorm:"not null;default:false"`
	LastSyncedAt time.Time
}

func (tldV2) TableName() string { return "tlds" }

type tldPriceV2 struct {
	TLD      string `gorm:"primaryKey;size:63"`
	Op       string `gorm:"primaryKey;size:16"`
	Cents    *int64
	Currency string `gorm:"size:3;not null"`
	SyncedAt time.Time
}

func (tldPriceV2) TableName() string { return "tld_prices" }

type sandboxTLDV2 struct {
	Name          string `gorm:"primaryKey;size:63"`
	Info          string `gorm:"not null"` // registry.TLDInfo as JSON
	RegisterCents *int64
	RenewCents    *int64
	TransferCents *int64
	RestoreCents  *int64
}

func (sandboxTLDV2) TableName() string { return "sandbox_tlds" }

type sandboxNameV2 struct {
	Name         string `gorm:"primaryKey;size:253"`
	TLD          string `gorm:"size:63;not null;index"`
	State        string `gorm:"size:16;not null"`
	PremiumCents *int64
}

func (sandboxNameV2) TableName() string { return "sandbox_names" }

func migrateV2(tx *gorm.DB) error {
	return tx.AutoMigrate(&tldV2{}, &tldPriceV2{}, &sandboxTLDV2{}, &sandboxNameV2{})
}
