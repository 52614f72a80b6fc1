package models

import "gorm.io/gorm"

// Step 35: a partner's events of one environment are paged in seq order
// (the webhook history), and their index now ends in seq as its name
// always said. Without seq the planner walked the primary key from the
// page's start, skipping every other partner's events: a partner with
// few events read the whole table for a page. The events are kept for
// webhook.Retention, so the index is rebuilt over weeks of them, not
// years.

func migrateV35(tx *gorm.DB) error {
	return execAll(tx, []string{
		`DROP INDEX IF EXISTS idx_events_partner_env_seq`,
		`CREATE INDEX idx_events_partner_env_seq ON events (partner_id, environment, seq)`,
	})
}
