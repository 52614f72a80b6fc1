package models

import "gorm.io/gorm"

// Step 44: a partner's Idempotency-Key whose request made its change (a
// refund, an order) is marked so in the change's own transaction, and a
// key so marked is never freed for a retry to run again. A process that
// died between committing a refund and storing its answer freed the key
// after five minutes, and the retry refunded a second time.

type idempotencyRecordV44 struct {
	CarriedOut bool `gorm:"not null;default:false"`
}

func (idempotencyRecordV44) TableName() string { return "idempotency_records" }

func migrateV44(tx *gorm.DB) error { return addColumns(tx, &idempotencyRecordV44{}, "CarriedOut") }
