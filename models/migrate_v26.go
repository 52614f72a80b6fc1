package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 26: every charge a row. Payments of the hosted checkout (written
// before the card is charged), the sandbox processor's own charges and
// refunds, and the checkout session holding a listing while it pays. The
// charges of sessions paid before this step become payments of their
// orders, refunded as far as their card refunds were sent.

type paymentV26 struct {
	ID             string    `gorm:"primaryKey;size:40"`
	Provider       string    `gorm:"size:16;not null"`
	SessionID      string    `gorm:"size:40;not null;index"`
	PartnerID      string    `gorm:"size:40;not null"`
	Environment    string    `gorm:"size:8;not null"`
	Domain         string    `gorm:"size:253;not null"`
	IdempotencyKey string    `gorm:"size:80;not null;uniqueIndex"`
	AmountCents    int64     `gorm:"not null"`
	Currency       string    `gorm:"size:3;not null"`
	Status         string    `gorm:"size:24;not null;index:idx_payments_status_created,priority:1"`
	ChargeID       *string   `gorm:"size:200;uniqueIndex"`
	CardLast4      string    `gorm:"size:4;not null;default:''"`
	OrderID        *string   `gorm:"size:40;uniqueIndex"`
	RefundedCents  int64     `gorm:"not null;default:0"`
	RefundID       string    `gorm:"size:200;not null;default:''"`
	Note           string    `gorm:"size:500;not null;default:''"`
	CreatedAt      time.Time `gorm:"not null;index:idx_payments_status_created,priority:2;index:idx_payments_created"`
	UpdatedAt      time.Time `gorm:"not null"`
}

func (paymentV26) TableName() string { return "payments" }

type sandboxChargeV26 struct {
	ID             string `gorm:"primaryKey;size:40"`
	IdempotencyKey string `gorm:"size:80;not null;uniqueIndex"`
	AmountCents    int64  `gorm:"not null"`
	Currency       string `gorm:"size:3;not null"`
	CardLast4      string `gorm:"size:4;not null"`
	Description    string `gorm:"size:253;not null;default:''"`
	RefundedCents  int64  `gorm:"not null;default:0"`
	CreatedAt      time.Time
}

func (sandboxChargeV26) TableName() string { return "sandbox_charges" }

type sandboxRefundV26 struct {
	ID             string `gorm:"primaryKey;size:40"`
	ChargeID       string `gorm:"size:40;not null;index"`
	IdempotencyKey string `gorm:"size:80;not null;uniqueIndex"`
	AmountCents    int64  `gorm:"not null"`
	CreatedAt      time.Time
}

func (sandboxRefundV26) TableName() string { return "sandbox_refunds" }

type listingV26 struct {
	HeldSession *string `gorm:"size:40"`
}

func (listingV26) TableName() string { return "listings" }

type sandboxListingV26 struct {
	HeldSession *string `gorm:"size:40"`
}

func (sandboxListingV26) TableName() string { return "sandbox_listings" }

func migrateV26(tx *gorm.DB) error {
	if err := tx.AutoMigrate(&paymentV26{}, &sandboxChargeV26{}, &sandboxRefundV26{}); err != nil {
		return err
	}
	if err := addColumns(tx, &listingV26{}, "HeldSession"); err != nil {
		return err
	}
	if err := addColumns(tx, &sandboxListingV26{}, "HeldSession"); err != nil {
		return err
	}
	sent := `(SELECT COALESCE(SUM(r.amount_cents), 0) FROM refunds r WHERE r.order_id = o.public_id AND r.card_status = 'sent')`
	return tx.Exec(`INSERT INTO payments (id, provider, session_id, partner_id, environment, domain, idempotency_key,
			amount_cents, currency, status, charge_id, card_last4, order_id, refunded_cents, refund_id, note, created_at, updated_at)
		SELECT 'pay_' || cs.id, 'sandbox', cs.id, cs.partner_id, cs.environment, cs.domain, cs.id || '-' || cs.declines,
			o.sale_price_cents, o.currency,
			CASE WHEN `+sent+` = 0 THEN 'succeeded' WHEN `+sent+` >= o.sale_price_cents THEN 'refunded' ELSE 'partially_refunded' END,
			cs.charge_id, cs.card_last4, o.public_id, `+sent+`, '', 'recorded from its checkout session by schema step 26',
			COALESCE(cs.paid_at, o.created_at), ?
		FROM checkout_sessions cs JOIN orders o ON o.public_id = cs.order_id
		WHERE cs.charge_id IS NOT NULL AND cs.charge_id <> ''`, time.Now().UTC()).Error
}
