package models

import "gorm.io/gorm"

// Step 30: a brokerage step's note and amount are internal to ops unless
// shared. The steps made so far are shared where they said nothing of a
// negotiation (the partner's opening, contacting the owner, the deal,
// whose price the case shows anyway); offers and the reasons of a case
// closed without a deal become internal.

type brokerageStepV30 struct {
	Shared bool `gorm:"not null;default:false"`
}

func (brokerageStepV30) TableName() string { return "brokerage_steps" }

func migrateV30(tx *gorm.DB) error {
	if err := addColumns(tx, &brokerageStepV30{}, "Shared"); err != nil {
		return err
	}
	return tx.Exec("UPDATE brokerage_steps SET shared = ? WHERE actor <> 'ops' OR COALESCE(event, '') <> '' OR note = 'contact-owner'", true).Error
}
