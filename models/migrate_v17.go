package models

import "gorm.io/gorm"

// Step 17: a webhook delivery's subject, so that the deliveries of one
// order reach the partner in the order of their events.

type webhookDeliveryV17 struct {
	EventSeq   int64  `gorm:"index:idx_deliveries_subject_pending,priority:3,where:state = 'pending'"`
	EndpointID string `gorm:"size:40;index:idx_deliveries_subject_pending,priority:1,where:state = 'pending'"`
	Subject    string `gorm:"size:80;not null;default:'';index:idx_deliveries_subject_pending,priority:2,where:state = 'pending'"`
	Followed   bool   `gorm:"not null;default:false"`
	State      string `gorm:"size:16"`
}

func (webhookDeliveryV17) TableName() string { return "webhook_deliveries" }

func migrateV17(tx *gorm.DB) error {
	if err := addColumns(tx, &webhookDeliveryV17{}, "Subject", "Followed"); err != nil {
		return err
	}
	if tx.Migrator().HasIndex(&webhookDeliveryV17{}, "idx_deliveries_subject_pending") {
		return nil // a database auto-migrated from today's models
	}
	return tx.Migrator().CreateIndex(&webhookDeliveryV17{}, "idx_deliveries_subject_pending")
}
