// Package models holds the gorm models, their migrations and the queries and
// rules that belong to the data. The same models run on Postgres and SQLite.
package models

import (
	"unicode/utf8"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/fault"
)

// Errors shared by every query of this package. Callers compare with
// errors.Is; they are coded, so that the HTTP side answers them as such.
var (
	ErrNotFound = fault.New(fault.NotFound, "not found")
	ErrConflict = fault.New(fault.Conflict, "conflicts with the current state")
)

// NewID returns a new opaque identifier for a row exposed to clients.
func NewID() string { return uuid.NewString() }

// ForUpdate locks the rows the query reads until the transaction ends. On
// Postgres that is SELECT … FOR UPDATE; SQLite has one writer, whose write
// transaction holds the whole database anyway.
func ForUpdate(tx *gorm.DB) *gorm.DB {
	if tx.Dialector.Name() == "postgres" {
		return tx.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	return tx
}

// ErrorText is err's message cut to fit an error column of maxLen bytes
// (see Cut).
func ErrorText(err error, maxLen int) string { return Cut(err.Error(), maxLen) }

// Cut cuts s to at most maxLen bytes, never in the middle of a UTF-8
// character (Postgres refuses invalid UTF-8).
func Cut(s string, maxLen int) string {
	if len(s) <= maxLen {
		return s
	}
	for maxLen > 0 && !utf8.RuneStart(s[maxLen]) {
		maxLen--
	}
	return s[:maxLen]
}

// All returns one value of every model, each one table: the schema the
// migrations build is what AutoMigrate would make of these (plus the SQL
// of steps 8 and 9 that no struct tag expresses). Tests hold the
// migrations to it and fail when an exported struct with gorm tags is
// missing from it.
func All() []any {
	return []any{
		&SchemaMigration{},
		&OutboxEntry{}, &Canary{}, &CanaryStep{},
		&TLD{}, &TLDPrice{}, &SandboxTLD{}, &SandboxName{}, &SandboxChange{},
		&Lookup{}, &RDAPBootstrap{},
		&Listing{},
		&User{}, &Session{}, &APIKey{},
		&OAuthClient{}, &OAuthCode{}, &OAuthToken{},
		&Domain{}, &BulkOp{}, &BulkItem{}, &CartItem{}, &ToolJob{},
		&Partner{}, &PartnerCredential{}, &SandboxListing{}, &WebhookEndpoint{}, &Event{}, &WebhookDelivery{},
		&Quote{}, &Order{}, &OrderStep{}, &Refund{},
		&CheckoutSession{},
		&LedgerEntry{}, &SettlementRun{},
		&Payout{}, &LedgerDay{}, &LedgerRollup{},
		&BrokerageCase{}, &BrokerageStep{}, &SiteCheck{},
		&ReferralLink{}, &ReferralClick{},
		&Payment{}, &SandboxCharge{}, &SandboxRefund{},
	}
}
