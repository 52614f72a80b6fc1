package models

import "time"

// LedgerEntry is one line of a double-entry ledger transaction: an amount
// in cents on an account (debits positive, credits negative), in the
// currency and environment of the order, refund, payout or brokerage
// case that caused it. The lines of one TxnID sum to zero in each
// currency. Entries are only ever added; statements, transactions and
// payouts are queries over them.
type LedgerEntry struct {
	ID          int64  `gorm:"primaryKey;autoIncrement"`
	TxnID       string `gorm:"size:40;not null;index"`
	Account     string `gorm:"size:40;not null"`
	PartnerID   string `gorm:"size:40;not null;index:idx_ledger_partner_created,priority:1"`
	Environment string `gorm:"size:8;not null;index:idx_ledger_partner_created,priority:2"`
	Currency    string `gorm:"size:3;not null"`
	AmountCents int64  `gorm:"not null"`
	// Kind is what caused the line: sale, refund, payout or brokerage.
	Kind     string  `gorm:"size:16;not null"`
	OrderID  *string `gorm:"size:40;index"`
	RefundID *string `gorm:"size:40"`
	// PayoutID and CaseID are set on payout and brokerage lines only;
	// their indexes hold those, so a sale's lines write no entry in them.
	PayoutID *string `gorm:"size:40;index:idx_ledger_entries_payout_id,where:payout_id IS NOT NULL"`
	// CaseID is the brokerage case of a brokerage line.
	CaseID    *string   `gorm:"size:40;index:idx_ledger_entries_case_id,where:case_id IS NOT NULL"`
	CreatedAt time.Time `gorm:"not null;index:idx_ledger_partner_created,priority:3"`
}

// Settlement run states.
const (
	RunQueued  = "queued"
	RunRunning = "running"
	RunDone    = "done"
	RunFailed  = "failed"
)

// SettlementRun settles the orders completed before the end of one
// period: one run per period, however many times it is asked for.
type SettlementRun struct {
	ID          string    `gorm:"primaryKey;size:40"`
	PeriodStart time.Time `gorm:"not null;uniqueIndex"`
	PeriodEnd   time.Time `gorm:"not null"`
	Status      string    `gorm:"size:16;not null"`
	// Trigger is who asked first: schedule or ops.
	Trigger    string `gorm:"size:16;not null"`
	Error      string `gorm:"size:500"`
	CreatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
}

// LedgerDay is the sales and refunds of a partner's orders of one payment
// model on one closed UTC day, in one environment and currency, added up
// from the ledger once the day is over, so that totals over long spans
// read a row a day instead of every line. A day is rolled up for every
// partner at once, in order (LedgerRollup).
type LedgerDay struct {
	PartnerID       string    `gorm:"primaryKey;size:40"`
	Environment     string    `gorm:"primaryKey;size:8"`
	Day             time.Time `gorm:"primaryKey"`
	Currency        string    `gorm:"primaryKey;size:3"`
	PaymentModel    string    `gorm:"primaryKey;size:24"`
	GMVCents        int64     `gorm:"not null"`
	CommissionCents int64     `gorm:"not null"`
	Count           int64     `gorm:"not null"`
}

// LedgerRollup records a UTC day rolled up into LedgerDay rows.
type LedgerRollup struct {
	Day    time.Time `gorm:"primaryKey"`
	DoneAt time.Time `gorm:"not null"`
}
