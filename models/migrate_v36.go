package models

import "gorm.io/gorm"

// Step 36: the orders' indexes are those their readers read, and hold
// only the orders these look for.
//   - A settlement run reads the orders in TRANSFER_COMPLETED in id order:
//     their own index, of those alone, replaces the index of (status,
//     public_id), which took an entry at every status move of every order
//     and kept every order ever made.
//   - Ops list every order, newest first, or those of one status: the
//     index of (created_at, public_id) serves the first, and that of
//     (status, created_at, public_id) the second for every status but
//     SETTLED, most orders, which the first finds at once. Each page
//     sorted every order (of the status) before.
//   - A partner's list ends its index in public_id, as its pages are
//     ordered; gorm had left the key out.
//   - The settled period's index holds the settled orders, not a NULL for
//     each other; the index of the listing sold, read by no query, is
//     dropped (a listing's sale is guarded by the listing's row).
// Settling an order writes five index entries where it wrote six, and
// the ops pages read their own rows.

func migrateV36(tx *gorm.DB) error {
	return execAll(tx, []string{
		`DROP INDEX IF EXISTS idx_orders_status_public_id`,
		`DROP INDEX IF EXISTS idx_orders_unsettled`, // a database auto-migrated by a binary of the day has it
		`CREATE INDEX idx_orders_unsettled ON orders (public_id) WHERE status = 'TRANSFER_COMPLETED'`,
		`DROP INDEX IF EXISTS idx_orders_settled_period`,
		`CREATE INDEX idx_orders_settled_period ON orders (settled_period) WHERE settled_period IS NOT NULL`,
		`DROP INDEX IF EXISTS idx_orders_listing_id`,
		`DROP INDEX IF EXISTS idx_orders_partner_env_created`,
		`CREATE INDEX idx_orders_partner_env_created ON orders (partner_id, environment, created_at, public_id)`,
		`DROP INDEX IF EXISTS idx_orders_created`,
		`CREATE INDEX idx_orders_created ON orders (created_at, public_id)`,
		`DROP INDEX IF EXISTS idx_orders_status_created`,
		`CREATE INDEX idx_orders_status_created ON orders (status, created_at, public_id) WHERE status <> 'SETTLED'`,
	})
}
