package models

import "gorm.io/gorm"

// Step 39: the brokerage cases are indexed as their lists read them,
// newest first: every case (ops), the cases of a status (ops' filter),
// and a partner's, whose index now ends in the key as its pages are
// ordered. Each page sorted every case it could show before. Cases are
// made by people, thousands rather than millions, and written a few
// times each: the indexes cost little.

func migrateV39(tx *gorm.DB) error {
	return execAll(tx, []string{
		`DROP INDEX IF EXISTS idx_brokerage_partner`,
		`CREATE INDEX idx_brokerage_partner ON brokerage_cases (partner_id, environment, created_at, id)`,
		`DROP INDEX IF EXISTS idx_brokerage_cases_status`,
		`DROP INDEX IF EXISTS idx_brokerage_cases_status_created`, // a database auto-migrated by a binary of the day has it
		`CREATE INDEX idx_brokerage_cases_status_created ON brokerage_cases (status, created_at, id)`,
		`DROP INDEX IF EXISTS idx_brokerage_cases_created`, // as idx_brokerage_cases_status_created
		`CREATE INDEX idx_brokerage_cases_created ON brokerage_cases (created_at, id)`,
	})
}
