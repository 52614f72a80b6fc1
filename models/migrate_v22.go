package models

import "gorm.io/gorm"

// Step 22: where giving a hosted order's refund back to the card stands.

type refundV22 struct {
	CardStatus   string `gorm:"size:16;not null;default:''"`
	CardRefundID string `gorm:"size:64;not null;default:''"`
	CardError    string `gorm:"size:500;not null;default:''"`
}

func (refundV22) TableName() string { return "refunds" }

func migrateV22(tx *gorm.DB) error {
	return addColumns(tx, &refundV22{}, "CardStatus", "CardRefundID", "CardError")
}
