package models

import "gorm.io/gorm"

// Step 18: the push a transfer step belongs to, by id rather than by the
// text of its note.

type orderStepV18 struct {
	PushID *int64 `gorm:"index"`
}

func (orderStepV18) TableName() string { return "order_steps" }

func migrateV18(tx *gorm.DB) error {
	if err := addColumns(tx, &orderStepV18{}, "PushID"); err != nil {
		return err
	}
	if tx.Migrator().HasIndex(&orderStepV18{}, "PushID") {
		return nil // a database auto-migrated from today's models
	}
	return tx.Migrator().CreateIndex(&orderStepV18{}, "PushID")
}
