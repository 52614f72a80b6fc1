package models

import "gorm.io/gorm"

// Step 41: each endpoint's failed webhook deliveries are indexed newest
// first. A partner's page of its failed deliveries read each endpoint's
// range of step 38's index, skipping every delivery that arrived: the
// whole range when few have failed. Like step 40's, the index holds only
// the failed deliveries, so the deliveries that arrive write nothing to it.

func migrateV41(tx *gorm.DB) error {
	return execAll(tx, []string{
		`DROP INDEX IF EXISTS idx_webhook_deliveries_endpoint_failed`, // a database auto-migrated by a binary of the day has it
		`CREATE INDEX idx_webhook_deliveries_endpoint_failed ON webhook_deliveries (endpoint_id, created_at, id) WHERE state = 'failed'`,
	})
}
