package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 11 as released (4968881): what the sandbox registry holds of a
// registered name and its log of applied changes, owned domains, bulk
// operations and their items, the cart, and tool jobs.

// sandboxNameV11 holds the columns step 11 adds to the sandbox_names of step 2.
type sandboxNameV11 struct {
	Locked      bool   `gorm:"not null;default:false"`
	Nameservers string // []string as JSON
	Contacts    string // map[string]registry.Contact as JSON
}

func (sandboxNameV11) TableName() string { return "sandbox_names" }

type sandboxChangeV11 struct {
	Change    string    `gorm:"primaryKey;size:64"`
	Name      string    `gorm:"size:253;not null;index"`
	Update    string    // registry.Update as JSON
	AppliedAt time.Time `gorm:"not null"`
}

func (sandboxChangeV11) TableName() string { return "sandbox_changes" }

type domainV11 struct {
	ID          string    `gorm:"primaryKey;size:36"`
	Name        string    `gorm:"size:253;not null;uniqueIndex"`
	TLD         string    `gorm:"size:63;not null"`
	UserID      string    `gorm:"size:36;not null;index:idx_domains_user_name,priority:1;index:idx_domains_user_expiry,priority:1"`
	Locked      bool      `gorm:"not null;default:false"`
	Nameservers string    // []string as JSON
	Folder      string    `gorm:"size:64;not null;default:''"`
	Contacts    string    // map[string]registry.Contact as JSON
	AutoRenew   bool      `gorm:"not null;default:false"`
	Status      string    `gorm:"size:16;not null"`
	ExpiresAt   time.Time `gorm:"not null;index:idx_domains_user_expiry,priority:2"`
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

func (domainV11) TableName() string { return "domains" }

type bulkOpV11 struct {
	ID          string    `gorm:"primaryKey;size:40"`
	UserID      string    `gorm:"size:36;not null;index"`
	Op          string    `gorm:"size:32;not null"`
	Update      string    // registry.Update as JSON
	Folder      *string   `gorm:"size:64"`
	SkipOnError bool      `gorm:"not null"`
	DryRun      bool      `gorm:"not null"`
	Total       int       `gorm:"not null"`
	State       string    `gorm:"size:16;not null"`
	Error       string    `gorm:"size:500"`
	Attempts    int       `gorm:"not null;default:0"`
	CreatedAt   time.Time `gorm:"index"`
	StartedAt   *time.Time
	FinishedAt  *time.Time
}

func (bulkOpV11) TableName() string { return "bulk_ops" }

type bulkItemV11 struct {
	ID         string `gorm:"primaryKey;size:48"`
	BulkOpID   string `gorm:"size:40;not null;index:idx_bulk_items_op_seq,priority:1"`
	Seq        int    `gorm:"not null;index:idx_bulk_items_op_seq,priority:2"`
	Domain     string `gorm:"size:253;not null"`
	State      string `gorm:"size:16;not null"`
	Change     string `gorm:"size:1000"`
	Error      string `gorm:"size:500"`
	Attempts   int    `gorm:"not null;default:0"`
	FinishedAt *time.Time
}

func (bulkItemV11) TableName() string { return "bulk_items" }

type cartItemV11 struct {
	ID         string    `gorm:"primaryKey;size:40"`
	UserID     string    `gorm:"size:36;not null;uniqueIndex:idx_cart_user_domain_op,priority:1"`
	Domain     string    `gorm:"size:253;not null;uniqueIndex:idx_cart_user_domain_op,priority:2"`
	Op         string    `gorm:"size:16;not null;uniqueIndex:idx_cart_user_domain_op,priority:3"`
	Years      int       `gorm:"not null"`
	PriceCents int64     `gorm:"not null"`
	Currency   string    `gorm:"size:3;not null"`
	CreatedAt  time.Time `gorm:"index"`
}

func (cartItemV11) TableName() string { return "cart_items" }

type toolJobV11 struct {
	ID         string    `gorm:"primaryKey;size:40"`
	Tool       string    `gorm:"size:32;not null"`
	Input      []byte    `gorm:"not null"` // json.RawMessage
	State      string    `gorm:"size:16;not null"`
	Done       int       `gorm:"not null;default:0"`
	Planned    int       `gorm:"not null;default:0"`
	Result     []byte    // json.RawMessage
	Error      string    `gorm:"size:500"`
	Attempts   int       `gorm:"not null;default:0"`
	RequestID  string    `gorm:"size:64"`
	CreatedAt  time.Time `gorm:"not null"`
	StartedAt  *time.Time
	FinishedAt *time.Time
	ExpiresAt  time.Time `gorm:"not null;index"`
}

func (toolJobV11) TableName() string { return "tool_jobs" }

func migrateV11(tx *gorm.DB) error {
	if err := addColumns(tx, &sandboxNameV11{}, "Locked", "Nameservers", "Contacts"); err != nil {
		return err
	}
	return tx.AutoMigrate(&sandboxChangeV11{}, &domainV11{}, &bulkOpV11{}, &bulkItemV11{}, &cartItemV11{}, &toolJobV11{})
}
