package models

import "time"

// CheckoutSession is a partner's hosted checkout of one listed name: the
// page a buyer pays on (its link carries a signed token naming the
// session). Paying it makes one order: OrderID, unique, is set once, in the
// order's transaction, and a second payment finds it set. Of the card only
// the last four digits are kept, with the provider's charge id.
type CheckoutSession struct {
	ID          string `gorm:"primaryKey;size:40"`
	PartnerID   string `gorm:"size:40;not null;index"`
	Environment string `gorm:"size:8;not null"`
	// ListingID is the listing offered (of Listing or SandboxListing, by
	// Environment).
	ListingID  string    `gorm:"size:36;not null"`
	Domain     string    `gorm:"size:253;not null"`
	ReturnURL  string    `gorm:"size:2000;not null"`
	CancelURL  string    `gorm:"size:2000;not null"`
	BuyerEmail string    `gorm:"size:254;not null"` // prefilled on the page; may be empty
	ExpiresAt  time.Time `gorm:"not null"`
	// Declines counts the payments refused so far: each attempt's charge
	// has an idempotency key of its own (the session id and this count).
	Declines  int     `gorm:"not null;default:0"`
	OrderID   *string `gorm:"size:40;uniqueIndex"`
	ChargeID  string  `gorm:"size:200"`
	CardLast4 string  `gorm:"size:4"`
	PaidAt    *time.Time
	// ReferralLinkID is the affiliate link of the last visitor who opened
	// the page with an attribution cookie, and ReferralAt when: the
	// checkouts a link started.
	ReferralLinkID *string `gorm:"size:40;index"`
	ReferralAt     *time.Time
	CreatedAt      time.Time
}
