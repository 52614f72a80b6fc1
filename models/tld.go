package models

import (
	"time"

	"github.com/domaind/domaind/internal/registry"
)

// TLD is a TLD as last synced from the registry provider. Endpoints answer
// from these rows, never from the provider inline.
type TLD struct {
	Name     string            `gorm:"primaryKey;size:63"`
	Source   string            `gorm:"size:16;not null"` // provider that answered: rtr or sandbox
	Metadata registry.Metadata `gorm:"serializer:json;not null"`
	// Syntax is the registry's rules for labels under the TLD (lengths, IDN
	// support), which SPEC §2.8 does not show but the search checks. A row
	// synced before it was stored holds the zero value: no length rules.
	Syntax registry.DomainSyntax `gorm:"serializer:json"`
	// Unavailable is set when the provider stopped offering the TLD.
	Unavailable  bool `gorm:"not null;default:false"`
	LastSyncedAt time.Time
}

// TLDPrice is one priced operation of a TLD, USD cents for one year. Cents
// is nil when the TLD does not offer the operation.
type TLDPrice struct {
	TLD      string `gorm:"primaryKey;size:63"`
	Op       string `gorm:"primaryKey;size:16"`
	Cents    *int64
	Currency string `gorm:"size:3;not null"`
	SyncedAt time.Time
}

// staleAfter is how old a TLD's last sync may be before it is reported stale.
const staleAfter = 24 * time.Hour

// Stale reports whether the TLD's data should not be trusted as current:
// the last successful sync is older than a day, or the provider stopped
// offering the TLD.
func (t TLD) Stale(now time.Time) bool {
	return t.Unavailable || now.Sub(t.LastSyncedAt) > staleAfter
}
