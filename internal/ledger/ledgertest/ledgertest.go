// Package ledgertest checks the ledger's invariants after a test.
package ledgertest

import (
	"testing"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/models"
)

// CheckAtEnd checks, when the test ends, that every ledger transaction in
// db sums to zero in each currency, and that each order's sales lines are
// its price less its refunds and its commission lines its commission less
// what its refunds reversed (never below zero); and that each brokerage
// case's brokerage_fees and commission lines are the fee and commission
// recorded on it (none before a deal). Lines of no order are checked by
// the case or payout they are about.
func CheckAtEnd(t testing.TB, db *gorm.DB) {
	t.Helper()
	t.Cleanup(func() { Check(t, db) })
}

// Check checks the ledger of db now (see CheckAtEnd).
func Check(t testing.TB, db *gorm.DB) {
	t.Helper()
	var unbalanced []struct {
		TxnID    string
		Currency string
		Sum      int64
	}
	if err := db.Model(&models.LedgerEntry{}).Select("txn_id, currency, SUM(amount_cents) AS sum").
		Group("txn_id, currency").Having("SUM(amount_cents) <> 0").Scan(&unbalanced).Error; err != nil {
		t.Fatalf("ledger: %v", err)
	}
	for _, u := range unbalanced {
		t.Errorf("ledger transaction %s sums to %d %s", u.TxnID, u.Sum, u.Currency)
	}
	var orders []models.Order
	if err := db.Find(&orders).Error; err != nil {
		t.Fatalf("ledger: %v", err)
	}
	for _, o := range orders {
		sales, commission := sumOn(t, db, "order_id", o.PublicID, ledger.Sales), sumOn(t, db, "order_id", o.PublicID, ledger.Commission)
		if -sales != o.SalePriceCents-o.RefundedCents {
			t.Errorf("ledger: order %s sold %d, refunded %d, but its sales lines are %d", o.PublicID, o.SalePriceCents, o.RefundedCents, sales)
		}
		if want := ledger.Kept(o.SalePriceCents, o.CommissionCents, o.RefundedCents); commission != want {
			t.Errorf("ledger: order %s has commission lines of %d, want %d", o.PublicID, commission, want)
		}
		checkReferral(t, db, o)
	}
	var cases []models.BrokerageCase
	if err := db.Find(&cases).Error; err != nil {
		t.Fatalf("ledger: %v", err)
	}
	for _, c := range cases {
		fees, commission := sumOn(t, db, "case_id", c.ID, ledger.BrokerageFees), sumOn(t, db, "case_id", c.ID, ledger.Commission)
		if -fees != c.FeeCents || commission != c.CommissionCents {
			t.Errorf("ledger: brokerage case %s (%s) has fee %d and commission %d, but its lines are %d and %d",
				c.ID, c.Status, c.FeeCents, c.CommissionCents, -fees, commission)
		}
	}
}

// checkReferral checks o's referral lines: under its affiliate only, the
// referral_commission lines its commission less what refunds reversed,
// and that much pending until o settles, nothing after.
func checkReferral(t testing.TB, db *gorm.DB, o models.Order) {
	t.Helper()
	var lines []models.LedgerEntry
	if err := db.Where("order_id = ? AND kind = ?", o.PublicID, ledger.KindReferral).Find(&lines).Error; err != nil {
		t.Fatalf("ledger: %v", err)
	}
	var earned, pending int64
	for _, l := range lines {
		if o.ReferralPartnerID == nil || l.PartnerID != *o.ReferralPartnerID {
			t.Errorf("ledger: order %s has a referral line of %s, not of its affiliate", o.PublicID, l.PartnerID)
		}
		switch l.Account {
		case ledger.ReferralCommission:
			earned += l.AmountCents
		case ledger.ReferralPending:
			pending -= l.AmountCents
		}
	}
	want := ledger.Kept(o.SalePriceCents, o.ReferralCents, o.RefundedCents)
	wantPending := want
	if o.Status == models.OrderSettled {
		wantPending = 0
	}
	if earned != want || pending != wantPending {
		t.Errorf("ledger: order %s (%s) has referral commission %d, %d of it pending; want %d, %d pending", o.PublicID, o.Status, earned, pending, want, wantPending)
	}
}

// sumOn sums the lines on account of the order or case (column) id; a
// failed query fails the test rather than reading as zero.
func sumOn(t testing.TB, db *gorm.DB, column, id, account string) int64 {
	t.Helper()
	var sum int64
	err := db.Model(&models.LedgerEntry{}).Where(column+" = ? AND account = ?", id, account).Select("COALESCE(SUM(amount_cents), 0)").Scan(&sum).Error
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	return sum
}
