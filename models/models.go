// Package models holds the gorm models, their migrations and the queries and
// rules that belong to the data. The same models run on Postgres and SQLite.
package models

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/plugin/dbresolver"

	"github.com/domaind/domaind/internal/fault"
)

// Equal narrows q to rows whose columns equal the values set: colValues
// are pairs of a column and its value, and a pair whose value is "" (a
// filter not asked for) is left out.
func Equal(q *gorm.DB, colValues ...string) *gorm.DB {
	for i := 0; i+1 < len(colValues); i += 2 {
		if colValues[i+1] != "" {
			q = q.Where(colValues[i]+" = ?", colValues[i+1])
		}
	}
	return q
}

// LikeContains is a LIKE pattern (for ESCAPE '\\') matching s anywhere,
// LIKE's wildcards in s taken literally.
func LikeContains(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// Found turns the error of a query for one row, named what ("order
// ord_…"), into the error to answer: nil stays nil, a missing row is a
// not_found error saying "no <what>", and any other error is wrapped as
// "find <what>: …". Not-found is translated here, once, not by every
// caller.
func Found(err error, what string) error { return FoundOr(err, what, "no %s", what) }

// FoundOr is Found with a not-found message of the caller's own words.
func FoundOr(err error, what, format string, args ...any) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrRecordNotFound):
		return &fault.Error{Code: fault.NotFound, Message: fmt.Sprintf(format, args...), Err: err}
	}
	return fmt.Errorf("find %s: %w", what, err)
}

// UTC is t in UTC, nil staying nil: the times of an answer all read
// alike, whatever the database driver gives back.
func UTC(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// NewID returns a new opaque identifier for a row exposed to clients.
func NewID() string { return uuid.NewString() }

// NewSortedID returns an identifier of prefix and 24 lower-case hex digits,
// as secret.NewID's, whose first 12 are the time in Unix milliseconds and
// the rest random: ids made later sort after those of an earlier
// millisecond, so that an index of them grows at its right end instead of
// in a random page for each row. Its 48 random bits make it unique, not
// unguessable: it is for rows written in volume whose id grants nothing
// by itself (events, webhook deliveries).
func NewSortedID(prefix string) string { return SortedIDAt(prefix, time.Now()) }

// SortedIDAt is a NewSortedID made at t.
func SortedIDAt(prefix string, t time.Time) string {
	var b [12]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.UnixMilli())<<16)
	rand.Read(b[6:]) // never fails
	return prefix + hex.EncodeToString(b[:])
}

// SortedIDTime is when id, a NewSortedID of prefix, was made (to the
// millisecond); ok is false when id has not that form.
func SortedIDTime(id, prefix string) (t time.Time, ok bool) {
	digits, found := strings.CutPrefix(id, prefix)
	if !found || len(digits) != 24 || strings.ToLower(digits) != digits {
		return time.Time{}, false
	}
	var b [8]byte
	if _, err := hex.Decode(b[2:], []byte(digits[:12])); err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(binary.BigEndian.Uint64(b[:]))), true
}

// ForUpdate locks the rows the query reads until the transaction ends. On
// Postgres that is SELECT … FOR UPDATE; SQLite has one writer, whose write
// transaction holds the whole database anyway.
func ForUpdate(tx *gorm.DB) *gorm.DB {
	if tx.Dialector.Name() == "postgres" {
		return tx.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	return tx
}

// ForUpdateSQL is ForUpdate for a query written out: the clause to end
// its SELECT with, " FOR UPDATE" on Postgres and nothing on SQLite.
func ForUpdateSQL(db *gorm.DB) string {
	if IsPostgres(db) {
		return " FOR UPDATE"
	}
	return ""
}

// ReplicaResolver names the database resolver of the read replica
// (DOMAIND_DATABASE_REPLICA_URL), which platform registers.
const ReplicaResolver = "replica"

// FromReplica sends the reads of the query to the read replica when one is
// configured, and to the primary otherwise; writes and transactions stay
// on the primary either way. It is for reads that may lag the primary by
// the replica's delay (public listings, reports), never for a read that
// must see a write just made. Like db.WithContext, it answers a new
// session, which may start several queries.
func FromReplica(db *gorm.DB) *gorm.DB {
	return db.Clauses(dbresolver.Use(ReplicaResolver)).Session(&gorm.Session{})
}

// ErrorText is err's message cut to fit an error column of maxLen bytes
// (see Cut).
func ErrorText(err error, maxLen int) string { return Cut(err.Error(), maxLen) }

// Storable reports whether s can be stored in, or compared with, a text
// column: UTF-8 without NUL characters (Postgres's text holds neither, and
// refuses a query that sends one). Input from anywhere but a JSON body is
// checked with it before it reaches a query.
func Storable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

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
		&Payment{}, &SandboxCharge{}, &SandboxRefund{}, &PaymentEvent{},
		&IdempotencyRecord{},
	}
}
