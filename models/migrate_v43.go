package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 43: partners' Idempotency-Keys and their answers, which lived in
// Redis and were lost with its data: a partner retrying a refund after a
// Redis restart would have refunded twice.

type idempotencyRecordV43 struct {
	ID        string    `gorm:"primaryKey;size:160"`
	Record    []byte    `gorm:"not null"`
	ExpiresAt time.Time `gorm:"not null;index"`
}

func (idempotencyRecordV43) TableName() string { return "idempotency_records" }

func migrateV43(tx *gorm.DB) error { return tx.AutoMigrate(&idempotencyRecordV43{}) }
