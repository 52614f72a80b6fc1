package models

import (
	"time"

	"github.com/domaind/domaind/internal/registry"
)

// Registry statuses of an owned domain.
const (
	DomainActive     = "active"
	DomainExpired    = "expired"    // past expiry, in the registrar's grace period
	DomainRedemption = "redemption" // deleted at the registry; only a restore brings it back
)

// DomainStatuses lists the statuses GET /api/domains filters on.
var DomainStatuses = []string{DomainActive, DomainExpired, DomainRedemption}

// Domain is a name a user holds through the service, as the service last
// applied it at the registry.
type Domain struct {
	ID          string                      `gorm:"primaryKey;size:36"`
	Name        string                      `gorm:"size:253;not null;uniqueIndex;index:idx_domains_user_name,priority:2"`
	TLD         string                      `gorm:"size:63;not null"`
	UserID      string                      `gorm:"size:36;not null;index:idx_domains_user_name,priority:1;index:idx_domains_user_expiry,priority:1"`
	Locked      bool                        `gorm:"not null;default:false"`
	Nameservers []string                    `gorm:"serializer:json"`
	Folder      string                      `gorm:"size:64;not null;default:''"`
	Contacts    map[string]registry.Contact `gorm:"serializer:json"`
	AutoRenew   bool                        `gorm:"not null;default:false"`
	Status      string                      `gorm:"size:16;not null"`
	ExpiresAt   time.Time                   `gorm:"not null;index:idx_domains_user_expiry,priority:2"`
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Bulk operation states. A bulk op is queued until its task starts it and
// running until every item has an outcome; failed means a failure stopped
// it (options.skip_on_error false) or its task gave up.
const (
	BulkQueued  = "queued"
	BulkRunning = "running"
	BulkDone    = "done"
	BulkFailed  = "failed"
)

// Bulk item states: pending until applied, then one of the three outcomes.
const (
	ItemPending = "pending"
	ItemDone    = "done"
	ItemFailed  = "failed"
	ItemSkipped = "skipped"
)

// BulkOp is one POST /api/domains/bulk/{op} that runs as a task: its items
// are the domains, each applied once.
type BulkOp struct {
	ID          string          `gorm:"primaryKey;size:40"`
	UserID      string          `gorm:"size:36;not null;index"`
	Op          string          `gorm:"size:32;not null"`
	Update      registry.Update `gorm:"serializer:json"`
	Folder      *string         `gorm:"size:64"`
	SkipOnError bool            `gorm:"not null"`
	DryRun      bool            `gorm:"not null"`
	Total       int             `gorm:"not null"`
	State       string          `gorm:"size:16;not null"`
	Error       string          `gorm:"size:500"`
	Attempts    int             `gorm:"not null;default:0"`
	CreatedAt   time.Time       `gorm:"index"`
	StartedAt   *time.Time
	FinishedAt  *time.Time
	// RescuedAt is when the rescue last gave the op a new task.
	RescuedAt *time.Time
}

// Terminal reports whether the op has its final state.
func (b BulkOp) Terminal() bool { return b.State == BulkDone || b.State == BulkFailed }

// BulkItem is one domain of a bulk op and its outcome. Its ID is the
// change id the registry provider sees, so a resumed op that applies it
// again changes nothing.
type BulkItem struct {
	ID       string `gorm:"primaryKey;size:48"`
	BulkOpID string `gorm:"size:40;not null;index:idx_bulk_items_op_seq,priority:1"`
	Seq      int    `gorm:"not null;index:idx_bulk_items_op_seq,priority:2"`
	Domain   string `gorm:"size:253;not null"`
	State    string `gorm:"size:16;not null"`
	// Change describes what the item changes (or, in a dry run, would).
	Change     string `gorm:"type:text"`
	Error      string `gorm:"size:500"`
	Attempts   int    `gorm:"not null;default:0"`
	FinishedAt *time.Time
	// SentAt is when a run first sent the item's change to the registry,
	// written before the call: an item still pending with it may have been
	// applied, its answer lost with the run.
	SentAt *time.Time
}

// CartItem is a renewal or restore waiting for checkout, priced when added.
// A user has at most one item per domain and operation.
type CartItem struct {
	ID         string    `gorm:"primaryKey;size:40"`
	UserID     string    `gorm:"size:36;not null;uniqueIndex:idx_cart_user_domain_op,priority:1"`
	Domain     string    `gorm:"size:253;not null;uniqueIndex:idx_cart_user_domain_op,priority:2"`
	Op         string    `gorm:"size:16;not null;uniqueIndex:idx_cart_user_domain_op,priority:3"`
	Years      int       `gorm:"not null"`
	PriceCents int64     `gorm:"not null"`
	Currency   string    `gorm:"size:3;not null"`
	CreatedAt  time.Time `gorm:"index"`
}
