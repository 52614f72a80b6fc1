package models

import "gorm.io/gorm"

// Step 36: two indexes of the orders hold only the orders their readers
// look for. A settlement run is the one reader of orders by status, and
// it reads those in TRANSFER_COMPLETED; the index of (status, public_id)
// took an entry at each status move of every order, and kept every order
// ever made. The index of the settled period had an entry for every order
// not settled yet, all NULL, which no query reads (a statement asks for a
// period). And the index of the listing sold, which no query reads, is
// dropped: a listing's sale is guarded by the listing's row. Settling an
// order now writes four index entries, not six, and a move before
// settlement three, not six.

func migrateV36(tx *gorm.DB) error {
	return execAll(tx, []string{
		`DROP INDEX IF EXISTS idx_orders_status_public_id`,
		`DROP INDEX IF EXISTS idx_orders_unsettled`, // a database auto-migrated by a binary of the day has it
		`CREATE INDEX idx_orders_unsettled ON orders (public_id) WHERE status = 'TRANSFER_COMPLETED'`,
		`DROP INDEX IF EXISTS idx_orders_settled_period`,
		`CREATE INDEX idx_orders_settled_period ON orders (settled_period) WHERE settled_period IS NOT NULL`,
		`DROP INDEX IF EXISTS idx_orders_listing_id`,
	})
}
