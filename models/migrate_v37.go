package models

import "gorm.io/gorm"

// Step 37: the ledger's indexes of payouts and brokerage cases hold the
// lines that have one. Every other line (a sale's three or four, a
// refund's) wrote a NULL entry into each, which no query reads: lookups
// by these columns are equalities or IS NOT NULL, which the partial
// indexes answer.

func migrateV37(tx *gorm.DB) error {
	return execAll(tx, []string{
		`DROP INDEX IF EXISTS idx_ledger_entries_payout_id`,
		`CREATE INDEX idx_ledger_entries_payout_id ON ledger_entries (payout_id) WHERE payout_id IS NOT NULL`,
		`DROP INDEX IF EXISTS idx_ledger_entries_case_id`,
		`CREATE INDEX idx_ledger_entries_case_id ON ledger_entries (case_id) WHERE case_id IS NOT NULL`,
	})
}
