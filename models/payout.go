package models

import "time"

// Payout states.
const (
	PayoutPending = "pending"
	PayoutPaid    = "paid"
)

// Payout is what the service owes a partner for one settlement period in
// one environment and currency: the commission of the sales it collected
// for the partner. A settlement run opens it (pending); finance marks it
// paid with the reference of the transfer, which writes its ledger lines.
type Payout struct {
	// ID ends the indexes of the lists, newest period first: ops' of every
	// payout and of one status, and a partner's.
	ID          string    `gorm:"primaryKey;size:40;index:idx_payouts_period_id,priority:2;index:idx_payouts_status,priority:3;index:idx_payout_partner,priority:4"`
	PartnerID   string    `gorm:"size:40;not null;uniqueIndex:idx_payout_period,priority:2;index:idx_payout_partner,priority:1"`
	Environment string    `gorm:"size:8;not null;uniqueIndex:idx_payout_period,priority:3;index:idx_payout_partner,priority:2"`
	Currency    string    `gorm:"size:3;not null;uniqueIndex:idx_payout_period,priority:4"`
	PeriodStart time.Time `gorm:"not null;uniqueIndex:idx_payout_period,priority:1;index:idx_payout_partner,priority:3;index:idx_payouts_period_id,priority:1;index:idx_payouts_status,priority:2"`
	PeriodEnd   time.Time `gorm:"not null"`
	AmountCents int64     `gorm:"not null"`
	Status      string    `gorm:"size:16;not null;index:idx_payouts_status,priority:1"`
	// Reference is finance's reference of the transfer, once paid.
	Reference string `gorm:"size:100"`
	PaidAt    *time.Time
	CreatedAt time.Time `gorm:"not null"`
}
