package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 19: the commission of each order, the double-entry ledger, and
// settlement runs.

type orderV19 struct {
	CommissionBPS   int        `gorm:"not null;default:0"`
	CommissionCents int64      `gorm:"not null;default:0"`
	SettledPeriod   *time.Time `gorm:"index"`
}

func (orderV19) TableName() string { return "orders" }

type ledgerEntryV19 struct {
	ID          int64     `gorm:"primaryKey;autoIncrement"`
	TxnID       string    `gorm:"size:40;not null;index"`
	Account     string    `gorm:"size:40;not null"`
	PartnerID   string    `gorm:"size:40;not null;index:idx_ledger_partner_created,priority:1"`
	Environment string    `gorm:"size:8;not null;index:idx_ledger_partner_created,priority:2"`
	Currency    string    `gorm:"size:3;not null"`
	AmountCents int64     `gorm:"not null"`
	Kind        string    `gorm:"size:16;not null"`
	OrderID     *string   `gorm:"size:40;index"`
	RefundID    *string   `gorm:"size:40"`
	PayoutID    *string   `gorm:"size:40;index"`
	CreatedAt   time.Time `gorm:"not null;index:idx_ledger_partner_created,priority:3"`
}

func (ledgerEntryV19) TableName() string { return "ledger_entries" }

type settlementRunV19 struct {
	ID          string    `gorm:"primaryKey;size:40"`
	PeriodStart time.Time `gorm:"not null;uniqueIndex"`
	PeriodEnd   time.Time `gorm:"not null"`
	Status      string    `gorm:"size:16;not null"`
	Trigger     string    `gorm:"size:16;not null"`
	Error       string    `gorm:"size:500"`
	CreatedAt   time.Time
	StartedAt   *time.Time
	FinishedAt  *time.Time
}

func (settlementRunV19) TableName() string { return "settlement_runs" }

func migrateV19(tx *gorm.DB) error {
	if err := addColumns(tx, &orderV19{}, "CommissionBPS", "CommissionCents", "SettledPeriod"); err != nil {
		return err
	}
	if !tx.Migrator().HasIndex(&orderV19{}, "SettledPeriod") {
		if err := tx.Migrator().CreateIndex(&orderV19{}, "SettledPeriod"); err != nil {
			return err
		}
	}
	return tx.AutoMigrate(&ledgerEntryV19{}, &settlementRunV19{})
}
