package models

import "gorm.io/gorm"

// Step 35: two indexes end in the column their pages are ordered by, as
// their names always said; gorm had built each on its first columns
// alone. A partner's events of one environment are paged in seq order
// (the webhook history): without seq the planner walked the primary key
// from the page's start, skipping every other partner's events, so a
// partner with few events read the whole table for a page. A user's
// domains are paged by name: without name each page sorted all of the
// user's domains. The events are kept for webhook.Retention, so their
// index is rebuilt over weeks of them, not years. And two lists paged
// newest first get the index of their rows' creation, rather than a sort
// of all of them for each page: the sandbox's listings (ops' inventory;
// the live listings have it) and the webhook deliveries (ops' webhooks
// page, a partner's account page).

func migrateV35(tx *gorm.DB) error {
	return execAll(tx, []string{
		`DROP INDEX IF EXISTS idx_events_partner_env_seq`,
		`CREATE INDEX idx_events_partner_env_seq ON events (partner_id, environment, seq)`,
		`DROP INDEX IF EXISTS idx_domains_user_name`,
		`CREATE INDEX idx_domains_user_name ON domains (user_id, name)`,
		`CREATE INDEX IF NOT EXISTS idx_sandbox_listings_created_at ON sandbox_listings (created_at)`,
		`CREATE INDEX IF NOT EXISTS idx_webhook_deliveries_created_at ON webhook_deliveries (created_at)`,
	})
}
