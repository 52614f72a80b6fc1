package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 14: partners and their credentials, the sandbox inventory, webhook
// endpoints, the event history and deliveries.

type partnerV14 struct {
	ID               string  `gorm:"primaryKey;size:40"`
	Name             string  `gorm:"size:200;not null"`
	ContactEmail     string  `gorm:"size:254;not null"`
	Status           string  `gorm:"size:16;not null"`
	CommissionBPS    int     `gorm:"not null;default:1500"`
	OwnerUserID      *string `gorm:"size:36;index"`
	AffiliateUserID  *string `gorm:"size:36"`
	UnseenCredential []byte
	CreatedAt        time.Time
	ApprovedAt       *time.Time
}

func (partnerV14) TableName() string { return "partners" }

type partnerCredentialV14 struct {
	KeyID        string `gorm:"primaryKey;size:40"`
	PartnerID    string `gorm:"size:40;not null;index"`
	Environment  string `gorm:"size:8;not null"`
	Scopes       string `gorm:"size:200;not null"` // space-separated
	SecretSealed []byte `gorm:"not null"`
	CreatedAt    time.Time
	LastUsedAt   *time.Time
	RevokedAt    *time.Time
}

func (partnerCredentialV14) TableName() string { return "partner_credentials" }

type sandboxListingV14 struct {
	ID          string `gorm:"primaryKey;size:36"`
	Domain      string `gorm:"size:253;not null;uniqueIndex"`
	TLD         string `gorm:"size:63;not null;index"`
	BINCents    *int64
	FloorCents  *int64
	Currency    string `gorm:"size:3;not null"`
	LockedUntil *time.Time
	CreatedAt   time.Time
}

func (sandboxListingV14) TableName() string { return "sandbox_listings" }

type webhookEndpointV14 struct {
	ID           string `gorm:"primaryKey;size:40"`
	PartnerID    string `gorm:"size:40;not null;uniqueIndex:idx_webhook_endpoints_partner_env,priority:1"`
	Environment  string `gorm:"size:8;not null;uniqueIndex:idx_webhook_endpoints_partner_env,priority:2"`
	URL          string `gorm:"size:2000;not null"`
	SecretSealed []byte `gorm:"not null"`
	Active       bool   `gorm:"not null"`
	Failures     int    `gorm:"not null;default:0"`
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func (webhookEndpointV14) TableName() string { return "webhook_endpoints" }

type eventV14 struct {
	Seq         int64     `gorm:"primaryKey;autoIncrement"`
	ID          string    `gorm:"size:40;not null;uniqueIndex"`
	PartnerID   string    `gorm:"size:40;not null;index:idx_events_partner_env_seq,priority:1"`
	Environment string    `gorm:"size:8;not null;index:idx_events_partner_env_seq,priority:2"`
	Type        string    `gorm:"size:64;not null"`
	Data        []byte    `gorm:"not null"` // JSON
	CreatedAt   time.Time `gorm:"not null;index"`
}

func (eventV14) TableName() string { return "events" }

type webhookDeliveryV14 struct {
	ID          string `gorm:"primaryKey;size:40"`
	EventSeq    int64  `gorm:"not null;index"`
	EndpointID  string `gorm:"size:40;not null;index"`
	State       string `gorm:"size:16;not null"`
	Attempts    int    `gorm:"not null;default:0"`
	LastStatus  int    `gorm:"not null;default:0"`
	LastError   string `gorm:"size:500"`
	CreatedAt   time.Time
	DeliveredAt *time.Time
	FinishedAt  *time.Time
}

func (webhookDeliveryV14) TableName() string { return "webhook_deliveries" }

func migrateV14(tx *gorm.DB) error {
	return tx.AutoMigrate(&partnerV14{}, &partnerCredentialV14{}, &sandboxListingV14{}, &webhookEndpointV14{}, &eventV14{}, &webhookDeliveryV14{})
}
