package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 29: outbox entries indexed by when they were handed to Redis, for
// the rescue that finds the tasks Redis lost.

type outboxEntryV29 struct {
	EnqueuedAt *time.Time `gorm:"index:idx_outbox_enqueued,where:enqueued_at IS NOT NULL"`
}

func (outboxEntryV29) TableName() string { return "outbox_entries" }

func migrateV29(tx *gorm.DB) error {
	if tx.Migrator().HasIndex(&outboxEntryV29{}, "idx_outbox_enqueued") {
		return nil // a database auto-migrated from today's models
	}
	return tx.Migrator().CreateIndex(&outboxEntryV29{}, "idx_outbox_enqueued")
}
