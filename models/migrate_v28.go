package models

import "gorm.io/gorm"

// Step 28: one pending partner application per person, held by the
// database, so that two applications sent at once cannot both be taken.

type partnerV28 struct {
	Status      string  `gorm:"size:16;not null"`
	OwnerUserID *string `gorm:"size:36;index;uniqueIndex:idx_partners_pending_owner,where:status = 'pending' AND owner_user_id IS NOT NULL"`
}

func (partnerV28) TableName() string { return "partners" }

func migrateV28(tx *gorm.DB) error {
	if tx.Migrator().HasIndex(&partnerV28{}, "idx_partners_pending_owner") {
		return nil // a database auto-migrated from today's models
	}
	return tx.Migrator().CreateIndex(&partnerV28{}, "idx_partners_pending_owner")
}
