package models

import (
	"time"

	"github.com/domaind/domaind/internal/domaininfo"
)

// Lookup states. A lookup is pending until its task writes one of the
// three terminal states.
const (
	LookupPending  = "pending"
	LookupDone     = "done"
	LookupNotFound = "not_found"
	LookupFailed   = "failed"
)

// Lookup is one WHOIS/RDAP lookup of a registrable domain, run by a
// lookup:run task. Its id is the lookup.id the WHOIS endpoint returns; a
// cached answer names the lookup that produced it.
type Lookup struct {
	ID        string            `gorm:"primaryKey;size:36"`
	Domain    string            `gorm:"size:253;not null;index"`
	State     string            `gorm:"size:16;not null"`
	Record    domaininfo.Record `gorm:"serializer:json"`
	Error     string            `gorm:"size:500"`
	RequestID string            `gorm:"size:64"`
	Attempts  int               `gorm:"not null;default:0"`
	CreatedAt time.Time         `gorm:"index"`
	// CompletedAt is set with the terminal state.
	CompletedAt *time.Time
}

// RDAPBootstrap is the newest IANA RDAP bootstrap file the refresh task
// fetched. A worker starting up prefers it to the snapshot built into the
// binary when it is newer. There is at most one row (ID 1).
type RDAPBootstrap struct {
	ID          int `gorm:"primaryKey;autoIncrement:false"`
	Data        []byte
	Publication time.Time
	FetchedAt   time.Time
}
