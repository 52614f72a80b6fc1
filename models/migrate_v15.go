package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 15: quotes, orders with their timelines and refunds, and who holds
// or bought a listing.

type listingV15 struct {
	HeldBy *string `gorm:"size:40"`
	SoldAt *time.Time
}

func (listingV15) TableName() string { return "listings" }

type sandboxListingV15 struct {
	HeldBy *string `gorm:"size:40"`
	SoldAt *time.Time
}

func (sandboxListingV15) TableName() string { return "sandbox_listings" }

type quoteV15 struct {
	ID          string    `gorm:"primaryKey;size:40"`
	PartnerID   string    `gorm:"size:40;not null;index:idx_quotes_partner_listing,priority:1"`
	Environment string    `gorm:"size:8;not null"`
	ListingID   string    `gorm:"size:36;not null;index:idx_quotes_partner_listing,priority:2"`
	Domain      string    `gorm:"size:253;not null"`
	PriceCents  int64     `gorm:"not null"`
	Currency    string    `gorm:"size:3;not null"`
	ExpiresAt   time.Time `gorm:"not null"`
	CreatedAt   time.Time
}

func (quoteV15) TableName() string { return "quotes" }

type orderV15 struct {
	PublicID            string  `gorm:"primaryKey;size:40"`
	PartnerID           string  `gorm:"size:40;not null;index:idx_orders_partner_env_created,priority:1"`
	Environment         string  `gorm:"size:8;not null;index:idx_orders_partner_env_created,priority:2"`
	ListingID           string  `gorm:"size:36;not null;index"`
	Domain              string  `gorm:"size:253;not null;index"`
	Status              string  `gorm:"size:24;not null;index"`
	Review              string  `gorm:"size:8;not null"`
	SalePriceCents      int64   `gorm:"not null"`
	Currency            string  `gorm:"size:3;not null"`
	PaymentModel        string  `gorm:"size:24;not null"`
	BuyerEmail          string  `gorm:"size:254;not null"`
	BuyerName           string  `gorm:"size:200;not null"`
	BuyerCountry        string  `gorm:"size:2;not null"`
	QuoteID             *string `gorm:"size:40;uniqueIndex"`
	ExternalPaymentRef  string  `gorm:"size:200;not null"`
	ReturnURL           string  `gorm:"size:2000"`
	CancelURL           string  `gorm:"size:2000"`
	RefundedCents       int64   `gorm:"not null;default:0"`
	TransferCompletedAt *time.Time
	CreatedAt           time.Time `gorm:"not null;index:idx_orders_partner_env_created,priority:3"`
	UpdatedAt           time.Time
}

func (orderV15) TableName() string { return "orders" }

type orderStepV15 struct {
	ID      int64     `gorm:"primaryKey;autoIncrement"`
	OrderID string    `gorm:"size:40;not null;index"`
	At      time.Time `gorm:"not null"`
	Actor   string    `gorm:"size:16;not null"`
	Status  string    `gorm:"size:24;not null"`
	Event   string    `gorm:"size:64"`
	Note    string    `gorm:"size:500"`
}

func (orderStepV15) TableName() string { return "order_steps" }

type refundV15 struct {
	ID          string `gorm:"primaryKey;size:40"`
	OrderID     string `gorm:"size:40;not null;index"`
	AmountCents int64  `gorm:"not null"`
	Currency    string `gorm:"size:3;not null"`
	Reason      string `gorm:"size:500;not null"`
	Actor       string `gorm:"size:16;not null"`
	CreatedAt   time.Time
}

func (refundV15) TableName() string { return "refunds" }

func migrateV15(tx *gorm.DB) error {
	if err := addColumns(tx, &listingV15{}, "HeldBy", "SoldAt"); err != nil {
		return err
	}
	if err := addColumns(tx, &sandboxListingV15{}, "HeldBy", "SoldAt"); err != nil {
		return err
	}
	return tx.AutoMigrate(&quoteV15{}, &orderV15{}, &orderStepV15{}, &refundV15{})
}
