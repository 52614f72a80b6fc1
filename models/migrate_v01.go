package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 1 as released (c19a3ee): the outbox, keyed by a 36-character id with
// its pending index on enqueued_at (step 12 changed both), and the canaries.

type outboxEntryV1 struct {
	ID         string `gorm:"primaryKey;size:36"`
	TaskType   string `gorm:"size:64;not null"`
	Payload    []byte `gorm:"not null"`
	Queue      string `gorm:"size:32;not null"`
	RequestID  string `gorm:"size:64"`
	CreatedAt  time.Time
	EnqueuedAt *time.Time `gorm:"index:idx_outbox_pending"`
	Attempts   int        `gorm:"not null;default:0"`
	LastError  string     `gorm:"size:500"`
}

func (outboxEntryV1) TableName() string { return "outbox_entries" }

type canaryV1 struct {
	ID          string `gorm:"primaryKey;size:36"`
	RequestID   string `gorm:"size:64"`
	Steps       int    `gorm:"not null"`
	StepMillis  int    `gorm:"not null"`
	Attempts    int    `gorm:"not null;default:0"`
	CreatedAt   time.Time
	StartedAt   *time.Time
	CompletedAt *time.Time
}

func (canaryV1) TableName() string { return "canaries" }

type canaryStepV1 struct {
	CanaryID  string `gorm:"primaryKey;size:36"`
	Step      int    `gorm:"primaryKey;autoIncrement:false"`
	Attempt   int    `gorm:"not null"`
	CreatedAt time.Time
}

func (canaryStepV1) TableName() string { return "canary_steps" }

func migrateV1(tx *gorm.DB) error {
	return tx.AutoMigrate(&outboxEntryV1{}, &canaryV1{}, &canaryStepV1{})
}
