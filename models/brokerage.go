package models

import "time"

// Brokerage case states (internal/brokerage.Moves has the moves).
const (
	CaseOpen            = "open"
	CaseContactingOwner = "contacting_owner"
	CaseNegotiating     = "negotiating"
	CaseClosedDeal      = "closed_deal"
	CaseClosedNoDeal    = "closed_no_deal"
)

// Brokerage tiers: how much of the work the marketplace does, and so its fee.
const (
	TierManaged   = "managed"
	TierSelfServe = "self_serve"
)

// BrokerageCase is a partner's request that the marketplace buy a
// registered domain from its owner for a buyer. A domain is in at most one
// open case per environment (ClosedAt is NULL until the case closes): the
// partial unique index is what refuses a second case racing the first. The
// fee and commission are recorded when a deal closes.
type BrokerageCase struct {
	ID          string `gorm:"primaryKey;size:40;index:idx_brokerage_partner,priority:4;index:idx_brokerage_cases_created,priority:2;index:idx_brokerage_cases_status_created,priority:3"`
	PartnerID   string `gorm:"size:40;not null;index:idx_brokerage_partner,priority:1"`
	Environment string `gorm:"size:8;not null;index:idx_brokerage_partner,priority:2;uniqueIndex:idx_brokerage_open_domain,priority:1,where:closed_at IS NULL"`
	Domain      string `gorm:"size:253;not null;uniqueIndex:idx_brokerage_open_domain,priority:2,where:closed_at IS NULL"`
	Tier        string `gorm:"size:16;not null"`
	BuyerEmail  string `gorm:"size:254;not null"`
	BudgetCents int64  `gorm:"not null"`
	Currency    string `gorm:"size:3;not null"`
	Status      string `gorm:"size:24;not null;index:idx_brokerage_cases_status_created,priority:1"`
	// PriceCents is the deal's price; FeeBPS and FeeCents the marketplace's
	// fee of it; CommissionBPS and CommissionCents the partner's share of
	// the fee. All are set when a deal closes, zero before.
	PriceCents      int64     `gorm:"not null;default:0"`
	FeeBPS          int       `gorm:"not null;default:0"`
	FeeCents        int64     `gorm:"not null;default:0"`
	CommissionBPS   int       `gorm:"not null;default:0"`
	CommissionCents int64     `gorm:"not null;default:0"`
	CreatedAt       time.Time `gorm:"not null;index:idx_brokerage_partner,priority:3;index:idx_brokerage_cases_created,priority:1;index:idx_brokerage_cases_status_created,priority:2"`
	UpdatedAt       time.Time `gorm:"not null"`
	ClosedAt        *time.Time
}

// BrokerageStep is one line of a case's timeline: a status move, when,
// who made it, and the amount it named (an offer, a price). Its note and
// amount are ops' own unless Shared: the partner and the buyer see an
// internal step as its status move alone.
type BrokerageStep struct {
	ID          int64     `gorm:"primaryKey;autoIncrement"`
	CaseID      string    `gorm:"size:40;not null;index"`
	At          time.Time `gorm:"not null"`
	Actor       string    `gorm:"size:16;not null"`
	Status      string    `gorm:"size:24;not null"` // the case's status after the step
	Event       string    `gorm:"size:64"`          // the event it emitted, if any
	AmountCents *int64
	Note        string `gorm:"size:500"`
	Shared      bool   `gorm:"not null;default:false"`
}

// Site check states.
const (
	SiteCheckPending = "pending"
	SiteCheckDone    = "done"
)

// SiteCheck is the brokerage's last look at whether a domain runs an
// active web site (internal/siteprobe), kept for a day. RequestedAt is the
// claim of the probe under way: whoever moves it starts the probe, so
// concurrent asks start one.
type SiteCheck struct {
	Domain      string    `gorm:"primaryKey;size:253"`
	Status      string    `gorm:"size:16;not null"`
	Active      bool      `gorm:"not null;default:false"`
	Reason      string    `gorm:"size:32"`
	Signal      string    `gorm:"size:200"`
	RequestedAt time.Time `gorm:"not null"`
	CheckedAt   *time.Time
}
