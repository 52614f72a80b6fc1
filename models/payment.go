package models

import "time"

// Payment statuses: where a charge of the hosted checkout stands. A
// payment is pending from before its card is charged until the provider's
// answer is recorded (or, when the answer never came, until the
// reconciliation asks the provider).
const (
	PaymentPending           = "pending"
	PaymentSucceeded         = "succeeded"
	PaymentFailed            = "failed"
	PaymentPartiallyRefunded = "partially_refunded"
	PaymentRefunded          = "refunded"
)

// Payment is one charge of a hosted checkout, as we asked the provider for
// it: written before the card is charged, so that a charge whose answer was
// lost (a crash, a timeout) is still ours to find, and kept for finance to
// tie the provider's statements to orders. A succeeded payment has the
// order it paid, or, when no order could be recorded, a refund of all of
// it on its way (its task is queued in the transaction that says so).
type Payment struct {
	// ID ends the indexes of finance's lists, newest first: of every
	// payment and of one status.
	ID string `gorm:"primaryKey;size:40;index:idx_payments_status_created,priority:3;index:idx_payments_created,priority:2"`
	// Provider is the processor's name (sandbox, stripe).
	Provider    string `gorm:"size:16;not null"`
	SessionID   string `gorm:"size:40;not null;index"`
	PartnerID   string `gorm:"size:40;not null"`
	Environment string `gorm:"size:8;not null"`
	Domain      string `gorm:"size:253;not null"`
	// IdempotencyKey is what the provider was asked with: the payments of
	// one attempt (two tabs, a retry after a lost answer) share it, and the
	// provider charges it once. A page's requests add its closing time
	// (PageExpiresAt) to it.
	IdempotencyKey string `gorm:"size:80;not null;uniqueIndex"`
	AmountCents    int64  `gorm:"not null"`
	Currency       string `gorm:"size:3;not null"`
	Status         string `gorm:"size:24;not null;index:idx_payments_status_created,priority:1"`
	// ChargeID is the provider's charge, once known.
	ChargeID  *string `gorm:"size:200;uniqueIndex"`
	CardLast4 string  `gorm:"size:4;not null;default:''"`
	// OrderID is the order the charge paid (nil while pending, when
	// declined, or when no order could be recorded).
	OrderID *string `gorm:"size:40;uniqueIndex"`
	// RefundedCents sums what went back to the card; RefundID is the
	// provider's id of the last refund.
	RefundedCents int64  `gorm:"not null;default:0"`
	RefundID      string `gorm:"size:200;not null;default:''"`
	// Note says what happened beyond the status: why a card was declined,
	// why no order was recorded, a refund that failed.
	Note string `gorm:"size:500;not null;default:''"`
	// ProviderRef is the processor's own id of a payment its buyer makes on
	// the processor's page (a Stripe Checkout Session, cs_…), and
	// RedirectURL that page: a buyer who comes back while it is open is
	// sent to it again. Both are empty for a card typed on our page.
	ProviderRef string `gorm:"size:200;not null;default:'';index"`
	RedirectURL string `gorm:"size:2000;not null;default:''"`
	// PageExpiresAt is when the processor's page is to close, as every
	// request for it says (nil before the first): a retry after a lost
	// answer asks with this time, under the same key, not with a new
	// one. It changes only when the processor refused it as too near,
	// so no page was made with it.
	PageExpiresAt *time.Time
	// ReturnGivenUpAt is when giving back a charge that paid for no order
	// was given up (payment.Book.FailReturn), for ops to pay back by
	// hand: nothing gives it back on its own after that. Its index holds
	// the returns waiting for ops (internal/backlog).
	ReturnGivenUpAt *time.Time `gorm:"index:idx_payments_return_given_up,where:return_given_up_at IS NOT NULL AND paid_by_hand_at IS NULL"`
	// PaidByHandAt is when ops recorded that they paid a given-up return
	// back by hand, and PaidByHandReference how (a bank transfer's
	// reference, say).
	PaidByHandAt        *time.Time
	PaidByHandReference string `gorm:"size:100;not null;default:''"`
	// PendingOrder is what the order of a payment made on the processor's
	// page is recorded with when the processor confirms it (the buyer and
	// the referral, as JSON; internal/order writes and reads it).
	PendingOrder string    `gorm:"type:text;not null;default:''"`
	CreatedAt    time.Time `gorm:"not null;index:idx_payments_status_created,priority:2;index:idx_payments_created,priority:1"`
	UpdatedAt    time.Time `gorm:"not null"`
}

// PaymentEvent is a notice a payment processor sent us (a Stripe webhook
// event), kept once per processor and event id: a notice sent again is
// known and changes nothing. Its task (payment:event) is queued in the
// transaction that stores it, and DoneAt set once it was acted on.
type PaymentEvent struct {
	// ID is the processor's name and its event id (stripe:evt_…).
	ID       string `gorm:"primaryKey;size:120"`
	Provider string `gorm:"size:16;not null"`
	// Kind is what happened, as internal/payment names it (paid,
	// expired, failed, refunded), and Type as the processor did.
	Kind      string `gorm:"size:16;not null"`
	Type      string `gorm:"size:80;not null"`
	PaymentID string `gorm:"size:40;not null;default:'';index"`
	// Body is the event as internal/payment reads it (JSON): only what it
	// acts on, never the processor's whole payload.
	Body       string    `gorm:"type:text;not null"`
	Note       string    `gorm:"size:500;not null;default:''"`
	ReceivedAt time.Time `gorm:"not null;index"`
	DoneAt     *time.Time
}

// SandboxCharge is a charge the sandbox card processor took: its own
// record, apart from ours (Payment), as a real processor's dashboard is.
type SandboxCharge struct {
	ID             string `gorm:"primaryKey;size:40"`
	IdempotencyKey string `gorm:"size:80;not null;uniqueIndex"`
	AmountCents    int64  `gorm:"not null"`
	Currency       string `gorm:"size:3;not null"`
	CardLast4      string `gorm:"size:4;not null"`
	Description    string `gorm:"size:253;not null;default:''"`
	RefundedCents  int64  `gorm:"not null;default:0"`
	CreatedAt      time.Time
}

// SandboxRefund is a refund the sandbox card processor made, once per
// idempotency key.
type SandboxRefund struct {
	ID             string `gorm:"primaryKey;size:40"`
	ChargeID       string `gorm:"size:40;not null;index"`
	IdempotencyKey string `gorm:"size:80;not null;uniqueIndex"`
	AmountCents    int64  `gorm:"not null"`
	CreatedAt      time.Time
}
