package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 21: daily roll-ups of the ledger's sales and refunds; orders
// indexed by status and id (a settlement run's batches) instead of status
// alone; pending webhook deliveries indexed by subject first (a batch of
// events looks their subjects up).

type orderV21 struct {
	PublicID string `gorm:"primaryKey;size:40;index:idx_orders_status_public_id,priority:2"`
	Status   string `gorm:"size:24;not null;index:idx_orders_status_public_id,priority:1"`
}

func (orderV21) TableName() string { return "orders" }

type webhookDeliveryV21 struct {
	EventSeq   int64  `gorm:"index:idx_deliveries_pending_subject,priority:3,where:state = 'pending'"`
	EndpointID string `gorm:"size:40;index:idx_deliveries_pending_subject,priority:2,where:state = 'pending'"`
	Subject    string `gorm:"size:80;index:idx_deliveries_pending_subject,priority:1,where:state = 'pending'"`
}

func (webhookDeliveryV21) TableName() string { return "webhook_deliveries" }

// replaceIndex creates index add of model, then drops index drop, each
// unless done already.
func replaceIndex(m gorm.Migrator, model any, add, drop string) error {
	if !m.HasIndex(model, add) {
		if err := m.CreateIndex(model, add); err != nil {
			return err
		}
	}
	if m.HasIndex(model, drop) {
		return m.DropIndex(model, drop)
	}
	return nil
}

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
	if err := replaceIndex(m, &orderV21{}, "idx_orders_status_public_id", "idx_orders_status"); err != nil {
		return err
	}
	if err := replaceIndex(m, &webhookDeliveryV21{}, "idx_deliveries_pending_subject", "idx_deliveries_subject_pending"); err != nil {
		return err
	}
	return tx.AutoMigrate(&ledgerDayV21{}, &ledgerRollupV21{})
}
