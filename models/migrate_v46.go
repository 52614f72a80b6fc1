package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 46: a payment keeps the time its processor's page was asked to
// close. The page's request carried a time computed anew on each try,
// so a retry after a lost answer, in a later minute, was the same
// idempotency key with another request, which Stripe refuses.

type paymentV46 struct {
	PageExpiresAt *time.Time
}

func (paymentV46) TableName() string { return "payments" }

func migrateV46(tx *gorm.DB) error { return addColumns(tx, &paymentV46{}, "PageExpiresAt") }
