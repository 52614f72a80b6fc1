package models

import "gorm.io/gorm"

// Step 34: the indexes of columns most rows leave NULL (an order's quote
// and referral, a step's push) hold only the rows that have them. Every
// order is written, and rewritten at each status move, into each index of
// its table: three of the orders' nine indexes no longer take an entry for
// an order made without a quote or a referral, and a step without a push
// none in its push index. Lookups by these columns are equalities, which
// the partial indexes still answer.

func migrateV34(tx *gorm.DB) error {
	return execAll(tx, []string{
		`DROP INDEX IF EXISTS idx_orders_quote_id`,
		`CREATE UNIQUE INDEX idx_orders_quote_id ON orders (quote_id) WHERE quote_id IS NOT NULL`,
		`DROP INDEX IF EXISTS idx_orders_referral_link_id`,
		`CREATE INDEX idx_orders_referral_link_id ON orders (referral_link_id) WHERE referral_link_id IS NOT NULL`,
		`DROP INDEX IF EXISTS idx_orders_referral_partner`,
		`CREATE INDEX idx_orders_referral_partner ON orders (referral_partner_id, created_at) WHERE referral_partner_id IS NOT NULL`,
		`DROP INDEX IF EXISTS idx_order_steps_push_id`,
		`CREATE INDEX idx_order_steps_push_id ON order_steps (push_id) WHERE push_id IS NOT NULL`,
	})
}
