package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 47: a payment keeps when the return of its charge was given up,
// for ops to pay back by hand. Only a note said so, and the rescue kept
// handing the return's task back, so that it could still refund the
// buyer after ops had.

type paymentV47 struct {
	ReturnGivenUpAt *time.Time
}

func (paymentV47) TableName() string { return "payments" }

func migrateV47(tx *gorm.DB) error { return addColumns(tx, &paymentV47{}, "ReturnGivenUpAt") }
