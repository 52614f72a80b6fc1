package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// migration is one schema step. Steps are append-only and frozen: a
// released step never changes what it builds, so each one works on its own
// snapshot of the structs (migrate_vNN.go) or on SQL, never on today's
// models. A change to a model is a new step, with a new snapshot;
// TestMigrationsBuildTheModelsSchema fails until there is one.
type migration struct {
	Version int
	Name    string
	Up      func(tx *gorm.DB) error
}

var migrations = []migration{
	{1, "outbox and canaries", migrateV1},
	{2, "TLDs, prices and the sandbox registry", migrateV2},
	{3, "lookups, RDAP bootstrap and marketplace listings", migrateV3},
	{4, "TLD label syntax", migrateV4},
	{5, "users and sessions", migrateV5},
	{6, "developer keys and listing locks", migrateV6},
	{7, "OAuth clients, codes and tokens", migrateV7},
	{8, "marketplace sort keys and indexes", migrateV8},
	{9, "marketplace counters (Postgres)", migrateV9},
	{10, "OAuth family revocation and client use", migrateV10},
	{11, "owned domains, bulk operations, the cart and tool jobs", migrateV11},
	{12, "outbox uuid keys and pending index, rescue times, long bulk changes", migrateV12},
	{13, "OAuth resource indicators", migrateV13},
	{14, "partners, credentials, sandbox inventory, webhooks and events", migrateV14},
	{15, "quotes, orders, their timelines and refunds; listing holds and sales", migrateV15},
	{16, "hosted checkout sessions", migrateV16},
	{17, "webhook deliveries in order per subject", migrateV17},
	{18, "the push of a transfer step", migrateV18},
	{19, "commission on orders, the ledger and settlement runs", migrateV19},
	{20, "payouts to partners", migrateV20},
	{21, "daily roll-ups of the ledger; orders indexed by status and id", migrateV21},
	{22, "card refunds of hosted orders", migrateV22},
	{23, "brokerage cases, their timelines and site checks; the case of a ledger line", migrateV23},
	{24, "referral links and clicks; affiliates; the referral of a sale and of a checkout", migrateV24},
	{25, "orders whose push the registry confirmed are delivered", migrateV25},
	{26, "payments of the hosted checkout; the sandbox processor's charges; the session holding a listing", migrateV26},
	{27, "when a partner's quotes began to hold a listing", migrateV27},
	{28, "one pending partner application per person", migrateV28},
	{29, "outbox entries by when they were enqueued", migrateV29},
	{30, "brokerage notes and offers internal unless shared", migrateV30},
	{31, "the house seller of the marketplace's own pages", migrateV31},
	{32, "developer keys' last use", migrateV32},
	{33, "payments made on a processor's page, and the processors' notices", migrateV33},
	{34, "partial indexes of the orders' and steps' rarely set columns", migrateV34},
	{35, "a partner's events by seq, a user's domains by name, sandbox listings and deliveries by creation", migrateV35},
	{36, "orders indexed as they are read: by settlement, by ops, by partners", migrateV36},
	{37, "the ledger lines of payouts and brokerage cases indexed alone", migrateV37},
	{38, "webhook deliveries by endpoint, newest first", migrateV38},
	{39, "brokerage cases by creation, of every partner, of a status and of one partner", migrateV39},
	{40, "the failed webhook deliveries by creation", migrateV40},
	{41, "each endpoint's failed webhook deliveries by creation", migrateV41},
	{42, "payments, payouts and referred sales indexed as their lists read them", migrateV42},
	{43, "partners' idempotency records", migrateV43},
	{44, "partners' idempotency records marked when their change is made", migrateV44},
	{45, "bulk items marked when their change is sent to the registry", migrateV45},
	{46, "when a payment's page on the processor closes", migrateV46},
	{47, "when the return of a payment's charge was given up", migrateV47},
	{48, "the registrar a start-transfer step pushes to", migrateV48},
	{49, "failed card refunds and given-up returns paid back by hand", migrateV49},
}

// SchemaMigration records an applied migration.
type SchemaMigration struct {
	Version   int `gorm:"primaryKey;autoIncrement:false"`
	Name      string
	AppliedAt time.Time
}

// schemaMigrationsTable is the table of SchemaMigration as Migrate creates
// it, frozen like the steps.
type schemaMigrationsTable struct {
	Version   int `gorm:"primaryKey;autoIncrement:false"`
	Name      string
	AppliedAt time.Time
}

func (schemaMigrationsTable) TableName() string { return "schema_migrations" }

// Migrate applies the migrations the database has not seen, each in its own
// transaction. On Postgres an advisory lock makes concurrent migrators (two
// replicas starting at once) take turns. The lock is a transaction's, held
// by a transaction left open on a connection of its own until the steps
// are done: unlike a session lock it works through PgBouncer's transaction
// pooling, which hands each transaction any server connection.
func Migrate(ctx context.Context, db *gorm.DB) error { return migrate(ctx, db, migrations) }

// migrate applies those of steps the database has not seen, in order.
func migrate(ctx context.Context, db *gorm.DB, steps []migration) error {
	db = db.WithContext(ctx)
	if IsPostgres(db) {
		conn, err := db.DB()
		if err != nil {
			return err
		}
		lock, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		// Rolling the transaction back at the end releases the lock.
		defer lock.Rollback()
		const lockID = 0x646f6d61696e64 // "domaind"
		if _, err := lock.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", lockID); err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
	}
	if err := db.AutoMigrate(&schemaMigrationsTable{}); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	var applied []int
	if err := db.Model(&SchemaMigration{}).Pluck("version", &applied).Error; err != nil {
		return err
	}
	done := map[int]bool{}
	for _, v := range applied {
		done[v] = true
	}
	for _, m := range steps {
		if done[m.Version] {
			continue
		}
		err := db.Transaction(func(tx *gorm.DB) error {
			if err := m.Up(tx); err != nil {
				return err
			}
			return tx.Create(&SchemaMigration{Version: m.Version, Name: m.Name, AppliedAt: time.Now().UTC()}).Error
		})
		if err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
		}
	}
	return nil
}

// Errors of CheckMigrated. Callers compare with errors.Is.
var (
	// ErrNotMigrated means the database lacks steps this binary knows.
	ErrNotMigrated = errors.New(`database is not migrated: run "domaind migrate"`)
	// ErrSchemaNewer means the database has steps this binary does not
	// know: a newer binary migrated it.
	ErrSchemaNewer = errors.New("database is newer than this binary")
)

// CheckMigrated compares the steps applied to the database with those this
// binary knows, without changing anything. It returns nil when they are the
// same, an error wrapping ErrNotMigrated when the database lacks some (or
// was never migrated), and else one wrapping ErrSchemaNewer when the
// database has steps the binary does not know.
func CheckMigrated(ctx context.Context, db *gorm.DB) error {
	db = db.WithContext(ctx)
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`
	if IsPostgres(db) {
		q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'schema_migrations'`
	}
	var tables int
	if err := db.Raw(q).Scan(&tables).Error; err != nil {
		return fmt.Errorf("check migrations: %w", err)
	}
	if tables == 0 {
		return ErrNotMigrated
	}
	var applied []SchemaMigration
	if err := db.Order("version").Find(&applied).Error; err != nil {
		return fmt.Errorf("check migrations: %w", err)
	}
	done := map[int]bool{}
	for _, a := range applied {
		done[a.Version] = true
	}
	var missing []string
	known := map[int]bool{}
	for _, m := range migrations {
		known[m.Version] = true
		if !done[m.Version] {
			missing = append(missing, fmt.Sprint(m.Version))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w (steps not applied: %s)", ErrNotMigrated, strings.Join(missing, ", "))
	}
	var unknown []string
	for _, a := range applied {
		if !known[a.Version] {
			unknown = append(unknown, fmt.Sprintf("%d %q", a.Version, a.Name))
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("%w: it has steps this binary does not know (%s); this binary knows steps 1 to %d",
			ErrSchemaNewer, strings.Join(unknown, ", "), migrations[len(migrations)-1].Version)
	}
	return nil
}

// IsPostgres reports whether db talks to Postgres (the alternative is SQLite).
func IsPostgres(db *gorm.DB) bool { return db.Dialector.Name() == "postgres" }
