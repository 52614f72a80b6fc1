package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 20: payouts to partners.

type payoutV20 struct {
	ID          string    `gorm:"primaryKey;size:40"`
	PartnerID   string    `gorm:"size:40;not null;uniqueIndex:idx_payout_period,priority:2;index:idx_payout_partner,priority:1"`
	Environment string    `gorm:"size:8;not null;uniqueIndex:idx_payout_period,priority:3;index:idx_payout_partner,priority:2"`
	Currency    string    `gorm:"size:3;not null;uniqueIndex:idx_payout_period,priority:4"`
	PeriodStart time.Time `gorm:"not null;uniqueIndex:idx_payout_period,priority:1;index:idx_payout_partner,priority:3"`
	PeriodEnd   time.Time `gorm:"not null"`
	AmountCents int64     `gorm:"not null"`
	Status      string    `gorm:"size:16;not null;index"`
	Reference   string    `gorm:"size:100"`
	PaidAt      *time.Time
	CreatedAt   time.Time `gorm:"not null"`
}

func (payoutV20) TableName() string { return "payouts" }

func migrateV20(tx *gorm.DB) error { return tx.AutoMigrate(&payoutV20{}) }
