package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 45: a bulk item is marked before its change is sent to the
// registry. An op that ended (given up, or stopped at a failure) with the
// item still pending skipped it, telling its owner nothing had happened,
// when a run that died had sent the change and the registry may have
// applied it.

type bulkItemV45 struct {
	SentAt *time.Time
}

func (bulkItemV45) TableName() string { return "bulk_items" }

func migrateV45(tx *gorm.DB) error { return addColumns(tx, &bulkItemV45{}, "SentAt") }
