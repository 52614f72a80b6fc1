package models

import "gorm.io/gorm"

// Step 42: finance's and partners' lists of payments, payouts and
// referred sales, newest first, are indexed in their order, the id last.
// A page in the middle read more than its rows:
//   - the payments of one status walked the creation of every payment,
//     skipping the other statuses (322 rows for a page of 30 when one in
//     ten had it);
//   - ops' payouts sorted a whole period of every partner's for each page
//     (601 rows for 100);
//   - an affiliate's sales, whose index had neither the environment nor
//     the order's id, walked the creation of every order instead (468
//     rows for 25, when a third of the orders were referred).
//
// The payments' two indexes and the payouts' of status and of partner
// take the id at their end; ops' payouts have a new index of period and
// id (the unique one of period, partner, environment and currency stays);
// the referred orders' takes the environment after the affiliate, which
// every reader of it filters on, and the order's id at its end.

func migrateV42(tx *gorm.DB) error {
	return execAll(tx, []string{
		`DROP INDEX IF EXISTS idx_payments_created`,
		`CREATE INDEX idx_payments_created ON payments (created_at, id)`,
		`DROP INDEX IF EXISTS idx_payments_status_created`,
		`CREATE INDEX idx_payments_status_created ON payments (status, created_at, id)`,
		`DROP INDEX IF EXISTS idx_payouts_period_id`, // a database auto-migrated by a binary of the day has it
		`CREATE INDEX idx_payouts_period_id ON payouts (period_start, id)`,
		`DROP INDEX IF EXISTS idx_payouts_status`,
		`CREATE INDEX idx_payouts_status ON payouts (status, period_start, id)`,
		`DROP INDEX IF EXISTS idx_payout_partner`,
		`CREATE INDEX idx_payout_partner ON payouts (partner_id, environment, period_start, id)`,
		`DROP INDEX IF EXISTS idx_orders_referral_partner`,
		`CREATE INDEX idx_orders_referral_partner ON orders (referral_partner_id, environment, created_at, public_id) WHERE referral_partner_id IS NOT NULL`,
	})
}
