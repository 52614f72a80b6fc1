package models

import (
	"time"

	"github.com/domaind/domaind/internal/registry"
)

// SandboxTLD is a TLD of the simulated registry (DOMAIND_REGISTRY=sandbox):
// its rules in the Realtime Register shape and its prices in USD cents
// (nil where the operation is not offered).
type SandboxTLD struct {
	Name          string           `gorm:"primaryKey;size:63"`
	Info          registry.TLDInfo `gorm:"serializer:json;not null"`
	RegisterCents *int64
	RenewCents    *int64
	TransferCents *int64
	RestoreCents  *int64
}

// Sandbox name states.
const (
	SandboxRegistered = "registered"
	SandboxReserved   = "reserved"
	SandboxPremium    = "premium"
)

// SandboxName is a name of the simulated registry that is not plainly
// available: registered, reserved, or premium (available at PremiumCents).
// Every other name under a sandbox TLD is available at the TLD's price.
type SandboxName struct {
	Name         string `gorm:"primaryKey;size:253"`
	TLD          string `gorm:"size:63;not null;index"`
	State        string `gorm:"size:16;not null"`
	PremiumCents *int64
	// What the registry holds of a registered name, changed by UpdateDomain.
	Locked      bool                        `gorm:"not null;default:false"`
	Nameservers []string                    `gorm:"serializer:json"`
	Contacts    map[string]registry.Contact `gorm:"serializer:json"`
}

// SandboxChange is the simulated registry's log of applied domain changes,
// keyed by the caller's change id: a change seen before is not applied
// again (as a real registry answers a repeated client transaction id).
type SandboxChange struct {
	Change    string          `gorm:"primaryKey;size:64"`
	Name      string          `gorm:"size:253;not null;index"`
	Update    registry.Update `gorm:"serializer:json"`
	AppliedAt time.Time       `gorm:"not null"`
}
