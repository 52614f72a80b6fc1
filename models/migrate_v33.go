package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 33: payments made on a processor's own page (Stripe Checkout): the
// processor's id and page of each, what its order is recorded with when
// the processor confirms it, and the notices (webhook events) processors
// send, kept once per event.

type paymentV33 struct {
	ProviderRef  string `gorm:"size:200;not null;default:'';index"`
	RedirectURL  string `gorm:"size:2000;not null;default:''"`
	PendingOrder string `gorm:"type:text;not null;default:''"`
}

func (paymentV33) TableName() string { return "payments" }

type paymentEventV33 struct {
	ID         string    `gorm:"primaryKey;size:120"`
	Provider   string    `gorm:"size:16;not null"`
	Kind       string    `gorm:"size:16;not null"`
	Type       string    `gorm:"size:80;not null"`
	PaymentID  string    `gorm:"size:40;not null;default:'';index"`
	Body       string    `gorm:"type:text;not null"`
	Note       string    `gorm:"size:500;not null;default:''"`
	ReceivedAt time.Time `gorm:"not null;index"`
	DoneAt     *time.Time
}

func (paymentEventV33) TableName() string { return "payment_events" }

func migrateV33(tx *gorm.DB) error {
	if err := addColumns(tx, &paymentV33{}, "ProviderRef", "RedirectURL", "PendingOrder"); err != nil {
		return err
	}
	if !tx.Migrator().HasIndex(&paymentV33{}, "ProviderRef") {
		if err := tx.Migrator().CreateIndex(&paymentV33{}, "ProviderRef"); err != nil {
			return err
		}
	}
	return tx.AutoMigrate(&paymentEventV33{})
}
