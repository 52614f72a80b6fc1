package models

import "gorm.io/gorm"

// Step 48: a start-transfer step keeps the registrar its push goes to,
// so that a push ops end by hand (fail-transfer) names it in its event
// as the registry's own transfer.* events do.

type orderStepV48 struct {
	Recipient string `gorm:"size:64;not null;default:''"`
}

func (orderStepV48) TableName() string { return "order_steps" }

func migrateV48(tx *gorm.DB) error { return addColumns(tx, &orderStepV48{}, "Recipient") }
