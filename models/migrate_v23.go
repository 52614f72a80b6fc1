package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 23: brokerage cases, their timelines, site checks, and the case a
// ledger line is about.

type brokerageCaseV23 struct {
	ID              string    `gorm:"primaryKey;size:40"`
	PartnerID       string    `gorm:"size:40;not null;index:idx_brokerage_partner,priority:1"`
	Environment     string    `gorm:"size:8;not null;index:idx_brokerage_partner,priority:2;uniqueIndex:idx_brokerage_open_domain,priority:1,where:closed_at IS NULL"`
	Domain          string    `gorm:"size:253;not null;uniqueIndex:idx_brokerage_open_domain,priority:2,where:closed_at IS NULL"`
	Tier            string    `gorm:"size:16;not null"`
	BuyerEmail      string    `gorm:"size:254;not null"`
	BudgetCents     int64     `gorm:"not null"`
	Currency        string    `gorm:"size:3;not null"`
	Status          string    `gorm:"size:24;not null;index"`
	PriceCents      int64     `gorm:"not null;default:0"`
	FeeBPS          int       `gorm:"not null;default:0"`
	FeeCents        int64     `gorm:"not null;default:0"`
	CommissionBPS   int       `gorm:"not null;default:0"`
	CommissionCents int64     `gorm:"not null;default:0"`
	CreatedAt       time.Time `gorm:"not null;index:idx_brokerage_partner,priority:3"`
	UpdatedAt       time.Time `gorm:"not null"`
	ClosedAt        *time.Time
}

func (brokerageCaseV23) TableName() string { return "brokerage_cases" }

type brokerageStepV23 struct {
	ID          int64     `gorm:"primaryKey;autoIncrement"`
	CaseID      string    `gorm:"size:40;not null;index"`
	At          time.Time `gorm:"not null"`
	Actor       string    `gorm:"size:16;not null"`
	Status      string    `gorm:"size:24;not null"`
	Event       string    `gorm:"size:64"`
	AmountCents *int64
	Note        string `gorm:"size:500"`
}

func (brokerageStepV23) TableName() string { return "brokerage_steps" }

type siteCheckV23 struct {
	Domain      string    `gorm:"primaryKey;size:253"`
	Status      string    `gorm:"size:16;not null"`
	Active      bool      `gorm:"not null;default:false"`
	Reason      string    `gorm:"size:32"`
	Signal      string    `gorm:"size:200"`
	RequestedAt time.Time `gorm:"not null"`
	CheckedAt   *time.Time
}

func (siteCheckV23) TableName() string { return "site_checks" }

type ledgerEntryV23 struct {
	CaseID *string `gorm:"size:40;index"`
}

func (ledgerEntryV23) TableName() string { return "ledger_entries" }

func migrateV23(tx *gorm.DB) error {
	if err := addColumns(tx, &ledgerEntryV23{}, "CaseID"); err != nil {
		return err
	}
	if !tx.Migrator().HasIndex(&ledgerEntryV23{}, "CaseID") {
		if err := tx.Migrator().CreateIndex(&ledgerEntryV23{}, "CaseID"); err != nil {
			return err
		}
	}
	return tx.AutoMigrate(&brokerageCaseV23{}, &brokerageStepV23{}, &siteCheckV23{})
}
