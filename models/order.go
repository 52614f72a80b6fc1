package models

import (
	"database/sql"
	"fmt"
	"slices"
	"time"
)

// Order statuses (SPEC §3.1). An order paid on our hosted checkout starts
// PAID; one the partner collected starts EXTERNALLY_PAID.
const (
	OrderExternallyPaid     = "EXTERNALLY_PAID"
	OrderPaid               = "PAID"
	OrderTransferInProgress = "TRANSFER_IN_PROGRESS"
	OrderTransferCompleted  = "TRANSFER_COMPLETED"
	OrderSettled            = "SETTLED"
	OrderRefunded           = "REFUNDED"
	OrderCancelled          = "CANCELLED"
)

// OrdersUnsettled is the condition of the orders a settlement run
// settles, as the predicate of their index (idx_orders_unsettled) says it.
// Queries write it out rather than pass the status as a parameter: a
// plan Postgres has cached for any status could not use the index.
const OrdersUnsettled = "status = '" + OrderTransferCompleted + "'"

// OrdersIn returns the condition of the orders in status, written out as
// OrdersUnsettled is (the index of the orders by status is partial), and
// false for a string that is none of the order statuses: only those
// constants ever reach the SQL.
func OrdersIn(status string) (string, bool) {
	return writtenOut("status", status, OrderExternallyPaid, OrderPaid, OrderTransferInProgress, OrderTransferCompleted,
		OrderSettled, OrderRefunded, OrderCancelled)
}

// writtenOut returns the condition that column is value, the value
// written into the SQL, when value is one of known (the package's
// constants), and false for any other string.
func writtenOut(column, value string, known ...string) (string, bool) {
	if !slices.Contains(known, value) {
		return "", false
	}
	return column + " = '" + value + "'", true
}

// Manual review states of an order: none below the threshold, pending
// until ops clear it, cleared after.
const (
	ReviewNone    = "none"
	ReviewPending = "pending"
	ReviewCleared = "cleared"
)

// Payment models: the partner charged the buyer, or we did on the hosted
// checkout.
const (
	PaymentPartnerCollected = "partner_collected"
	PaymentHosted           = "hosted"
)

// Quote is a firm buy-now price reserved for one partner until ExpiresAt:
// the listing is held for them meanwhile.
type Quote struct {
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

// Order is a sale of a listing through a partner. Amounts are cents.
type Order struct {
	// PublicID is also the key of the orders awaiting settlement, which a
	// settlement run reads in id order, a batch at a time: the index
	// holds only the orders in TRANSFER_COMPLETED, so a status move
	// writes no entry into it but the one into that status. It ends the
	// indexes of the lists, newest first (see CreatedAt).
	PublicID    string `gorm:"primaryKey;size:40;index:idx_orders_unsettled,where:status = 'TRANSFER_COMPLETED';index:idx_orders_partner_env_created,priority:4;index:idx_orders_created,priority:2;index:idx_orders_status_created,priority:3,where:status <> 'SETTLED';index:idx_orders_referral_partner,priority:4,where:referral_partner_id IS NOT NULL"`
	PartnerID   string `gorm:"size:40;not null;index:idx_orders_partner_env_created,priority:1"`
	Environment string `gorm:"size:8;not null;index:idx_orders_partner_env_created,priority:2;index:idx_orders_referral_partner,priority:2,where:referral_partner_id IS NOT NULL"`
	// ListingID is the listing sold (of Listing or SandboxListing, by
	// Environment). No query looks orders up by it, so it has no index: a
	// listing's sale is guarded by the listing's own row (sold_at).
	ListingID string `gorm:"size:36;not null"`
	Domain    string `gorm:"size:253;not null;index"`
	// Status leads the index of the unsettled orders' lists by status;
	// settled orders, most of them, are found in the index of all the
	// orders by creation instead, so settling one writes no entry here.
	Status         string `gorm:"size:24;not null;index:idx_orders_status_created,priority:1,where:status <> 'SETTLED'"`
	Review         string `gorm:"size:8;not null"`
	SalePriceCents int64  `gorm:"not null"`
	Currency       string `gorm:"size:3;not null"`
	PaymentModel   string `gorm:"size:24;not null"`
	BuyerEmail     string `gorm:"size:254;not null"`
	BuyerName      string `gorm:"size:200;not null"`
	BuyerCountry   string `gorm:"size:2;not null"`
	// QuoteID, ReferralLinkID and ReferralPartnerID are NULL on most
	// orders; their indexes are partial, so an order without them costs
	// those indexes nothing when it is written or moves status.
	QuoteID            *string `gorm:"size:40;uniqueIndex:idx_orders_quote_id,where:quote_id IS NOT NULL"`
	ExternalPaymentRef string  `gorm:"size:200;not null"`
	ReturnURL          string  `gorm:"size:2000"`
	CancelURL          string  `gorm:"size:2000"`
	// RefundedCents sums the order's refunds.
	RefundedCents int64 `gorm:"not null;default:0"`
	// CommissionBPS and CommissionCents are the partner's rate when the
	// order was made and its share of the sale at that rate (rounded half
	// to even), so that a later rate change rewrites no history.
	CommissionBPS   int   `gorm:"not null;default:0"`
	CommissionCents int64 `gorm:"not null;default:0"`
	// ReferralLinkID is the affiliate link whose click brought the buyer
	// (last click wins), ReferralPartnerID its partner, and ReferralBPS
	// and ReferralCents that partner's rate and commission on the sale,
	// recorded once like CommissionBPS (internal/referral).
	ReferralLinkID      *string `gorm:"size:40;index:idx_orders_referral_link_id,where:referral_link_id IS NOT NULL"`
	ReferralPartnerID   *string `gorm:"size:40;index:idx_orders_referral_partner,priority:1,where:referral_partner_id IS NOT NULL"`
	ReferralBPS         int     `gorm:"not null;default:0"`
	ReferralCents       int64   `gorm:"not null;default:0"`
	TransferCompletedAt *time.Time
	// SettledPeriod is the start of the settlement period whose run settled
	// the order. Its index holds the settled orders only.
	SettledPeriod *time.Time `gorm:"index:idx_orders_settled_period,where:settled_period IS NOT NULL"`
	// CreatedAt orders the lists, newest first: a partner's, ops' of
	// every order, ops' of one status, and an affiliate's referred sales.
	CreatedAt time.Time `gorm:"not null;index:idx_orders_partner_env_created,priority:3;index:idx_orders_referral_partner,priority:3,where:referral_partner_id IS NOT NULL;index:idx_orders_created,priority:1;index:idx_orders_status_created,priority:2,where:status <> 'SETTLED'"`
	UpdatedAt time.Time
}

// OrderColumns are the columns of an order in the order ScanOrders reads
// them, for a SELECT or RETURNING list.
const OrderColumns = `public_id, partner_id, environment, listing_id, domain, status, review,
	sale_price_cents, currency, payment_model, buyer_email, buyer_name, buyer_country, quote_id,
	external_payment_ref, return_url, cancel_url, refunded_cents, commission_bps, commission_cents,
	referral_link_id, referral_partner_id, referral_bps, referral_cents, transfer_completed_at,
	settled_period, created_at, updated_at`

// ScanOrders reads the orders of rows, whose columns are OrderColumns,
// and closes rows. It is gorm's Scan without the reflection over each
// field of each row: that scan was a third of a settlement batch's CPU in
// this process (a batch reads back the hundreds of orders it settles).
// The nullable columns of fields that are not pointers read as gorm
// reads them: NULL is the zero value.
func ScanOrders(rows *sql.Rows) ([]Order, error) {
	defer rows.Close()
	var orders []Order
	for rows.Next() {
		var o Order
		var returnURL, cancelURL sql.NullString
		var updated sql.NullTime
		err := rows.Scan(&o.PublicID, &o.PartnerID, &o.Environment, &o.ListingID, &o.Domain, &o.Status, &o.Review,
			&o.SalePriceCents, &o.Currency, &o.PaymentModel, &o.BuyerEmail, &o.BuyerName, &o.BuyerCountry, &o.QuoteID,
			&o.ExternalPaymentRef, &returnURL, &cancelURL, &o.RefundedCents, &o.CommissionBPS, &o.CommissionCents,
			&o.ReferralLinkID, &o.ReferralPartnerID, &o.ReferralBPS, &o.ReferralCents, &o.TransferCompletedAt,
			&o.SettledPeriod, &o.CreatedAt, &updated)
		if err != nil {
			return nil, fmt.Errorf("read an order: %w", err)
		}
		o.ReturnURL, o.CancelURL, o.UpdatedAt = returnURL.String, cancelURL.String, updated.Time
		orders = append(orders, o)
	}
	return orders, rows.Err()
}

// OrderStep is one line of an order's timeline: a status move or an event,
// when, and who made it (partner, ops, registry, settlement).
type OrderStep struct {
	ID      int64     `gorm:"primaryKey;autoIncrement"`
	OrderID string    `gorm:"size:40;not null;index"`
	At      time.Time `gorm:"not null"`
	Actor   string    `gorm:"size:16;not null"`
	Status  string    `gorm:"size:24;not null"` // the order's status after the step
	Event   string    `gorm:"size:64"`          // the event it emitted, if any
	Note    string    `gorm:"size:500"`
	// PushID is, on a transfer.* step, the push it belongs to: the id of
	// the start-transfer step that asked for it.
	PushID *int64 `gorm:"index:idx_order_steps_push_id,where:push_id IS NOT NULL"`
	// Recipient is, on a start-transfer step, the registrar its push
	// goes to.
	Recipient string `gorm:"size:64;not null;default:''"`
}

// Refund is money given back on an order, in full or in part.
type Refund struct {
	ID          string `gorm:"primaryKey;size:40"`
	OrderID     string `gorm:"size:40;not null;index"`
	AmountCents int64  `gorm:"not null"`
	Currency    string `gorm:"size:3;not null"`
	Reason      string `gorm:"size:500;not null"`
	Actor       string `gorm:"size:16;not null"`
	// CardStatus is, for a hosted order's refund, where giving the money
	// back to the buyer's card stands: pending, sent or failed ("" for a
	// partner-collected order, whose partner refunds its buyer).
	CardStatus string `gorm:"size:16;not null;default:''"`
	// CardRefundID is the payment provider's id of the card refund, once
	// sent; CardError why it failed.
	CardRefundID string `gorm:"size:64;not null;default:''"`
	CardError    string `gorm:"size:500;not null;default:''"`
	// PaidByHandAt is when ops recorded that they paid a failed card
	// refund back by hand, and PaidByHandReference how.
	PaidByHandAt        *time.Time
	PaidByHandReference string `gorm:"size:100;not null;default:''"`
	// CreatedAt leads the index of the failed card refunds waiting for
	// ops (internal/backlog).
	CreatedAt time.Time `gorm:"index:idx_refunds_card_failed,where:card_status = 'failed' AND paid_by_hand_at IS NULL"`
}

// Card refund states of a hosted order's refund.
const (
	CardRefundPending = "pending"
	CardRefundSent    = "sent"
	CardRefundFailed  = "failed"
)
