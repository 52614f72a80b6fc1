package models

import "gorm.io/gorm"

// Step 40: the failed webhook deliveries are indexed newest first, alone.
// Ops' page of the failed deliveries walked the index of every delivery's
// creation, reading every delivered one newer than the page's last: the
// whole table when few have failed. A delivery takes an entry only when
// it fails, so the index costs nothing to the deliveries that arrive.
// (The pending ones are the newest, or many when a receiver is down: the
// walk of the creation index finds them soon.)

func migrateV40(tx *gorm.DB) error {
	return execAll(tx, []string{
		`DROP INDEX IF EXISTS idx_webhook_deliveries_failed`, // a database auto-migrated by a binary of the day has it
		`CREATE INDEX idx_webhook_deliveries_failed ON webhook_deliveries (created_at, id) WHERE state = 'failed'`,
	})
}
