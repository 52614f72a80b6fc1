package models

import "gorm.io/gorm"

// Step 38: a webhook endpoint's deliveries are indexed newest first, by
// (endpoint_id, created_at, id) instead of endpoint_id alone. A partner's
// deliveries (their account page, ops' view of one partner) are one
// range of it per endpoint, which a page reads for its own rows; each
// page sorted every delivery of the partner before. The index replaces
// the old one, which every lookup by endpoint can read in its stead, so a
// delivery writes as many index entries as before.

func migrateV38(tx *gorm.DB) error {
	return execAll(tx, []string{
		`DROP INDEX IF EXISTS idx_webhook_deliveries_endpoint_id`,
		`DROP INDEX IF EXISTS idx_webhook_deliveries_endpoint_created`, // a database auto-migrated by a binary of the day has it
		`CREATE INDEX idx_webhook_deliveries_endpoint_created ON webhook_deliveries (endpoint_id, created_at, id)`,
	})
}
