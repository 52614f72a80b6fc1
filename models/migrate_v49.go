package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 49: a failed card refund and a given-up return keep when ops paid
// them back by hand, and how, so that what is left for ops can be counted
// (internal/backlog); each has a partial index of those still waiting,
// which a metrics scrape reads.

type refundV49 struct {
	PaidByHandAt        *time.Time
	PaidByHandReference string `gorm:"size:100;not null;default:''"`
}

func (refundV49) TableName() string { return "refunds" }

type paymentV49 struct {
	PaidByHandAt        *time.Time
	PaidByHandReference string `gorm:"size:100;not null;default:''"`
}

func (paymentV49) TableName() string { return "payments" }

func migrateV49(tx *gorm.DB) error {
	if err := addColumns(tx, &refundV49{}, "PaidByHandAt", "PaidByHandReference"); err != nil {
		return err
	}
	if err := addColumns(tx, &paymentV49{}, "PaidByHandAt", "PaidByHandReference"); err != nil {
		return err
	}
	return execAll(tx, []string{
		`DROP INDEX IF EXISTS idx_refunds_card_failed`, // a database auto-migrated by a binary of the day has them
		`CREATE INDEX idx_refunds_card_failed ON refunds (created_at) WHERE card_status = 'failed' AND paid_by_hand_at IS NULL`,
		`DROP INDEX IF EXISTS idx_payments_return_given_up`,
		`CREATE INDEX idx_payments_return_given_up ON payments (return_given_up_at) WHERE return_given_up_at IS NOT NULL AND paid_by_hand_at IS NULL`,
	})
}
