package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 21: daily roll-ups of the ledger's sales and refunds, and orders
// indexed by status and id (a settlement run's batches) instead of status
// alone.

type orderV21 struct {
	PublicID string `gorm:"primaryKey;size:40;index:idx_orders_status_public_id,priority:2"`
	Status   string `gorm:"size:24;not null;index:idx_orders_status_public_id,priority:1"`
}

func (orderV21) TableName() string { return "orders" }

type ledgerDayV21 struct {
	PartnerID       string    `gorm:"primaryKey;size:40"`
	Environment     string    `gorm:"primaryKey;size:8"`
	Day             time.Time `gorm:"primaryKey"`
	Currency        string    `gorm:"primaryKey;size:3"`
	PaymentModel    string    `gorm:"primaryKey;size:24"`
	GMVCents        int64     `gorm:"not null"`
	CommissionCents int64     `gorm:"not null"`
	Count           int64     `gorm:"not null"`
}

func (ledgerDayV21) TableName() string { return "ledger_days" }

type ledgerRollupV21 struct {
	Day    time.Time `gorm:"primaryKey"`
	DoneAt time.Time `gorm:"not null"`
}

func (ledgerRollupV21) TableName() string { return "ledger_rollups" }

func migrateV21(tx *gorm.DB) error {
	m := tx.Migrator()
	if !m.HasIndex(&orderV21{}, "idx_orders_status_public_id") {
		if err := m.CreateIndex(&orderV21{}, "idx_orders_status_public_id"); err != nil {
			return err
		}
	}
	if m.HasIndex(&orderV21{}, "idx_orders_status") {
		if err := m.DropIndex(&orderV21{}, "idx_orders_status"); err != nil {
			return err
		}
	}
	return tx.AutoMigrate(&ledgerDayV21{}, &ledgerRollupV21{})
}
