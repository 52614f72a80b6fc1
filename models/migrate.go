package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// migration is one schema step. Steps are append-only: a released step is
// never edited, a change is a new step.
type migration struct {
	Version int
	Name    string
	Up      func(tx *gorm.DB) error
}

var migrations = []migration{
	{1, "outbox and canaries", func(tx *gorm.DB) error {
		return tx.AutoMigrate(&OutboxEntry{}, &Canary{}, &CanaryStep{})
	}},
	{2, "TLDs, prices and the sandbox registry", func(tx *gorm.DB) error {
		return tx.AutoMigrate(&TLD{}, &TLDPrice{}, &SandboxTLD{}, &SandboxName{})
	}},
	{3, "lookups, RDAP bootstrap and marketplace listings", func(tx *gorm.DB) error {
		return tx.AutoMigrate(&Lookup{}, &RDAPBootstrap{}, &Listing{})
	}},
	{4, "TLD label syntax", func(tx *gorm.DB) error {
		return tx.AutoMigrate(&TLD{})
	}},
	{5, "users and sessions", func(tx *gorm.DB) error {
		return tx.AutoMigrate(&User{}, &Session{})
	}},
	{6, "developer keys and listing locks", func(tx *gorm.DB) error {
		return tx.AutoMigrate(&APIKey{}, &Listing{})
	}},
	{7, "OAuth clients, codes and tokens", func(tx *gorm.DB) error {
		return tx.AutoMigrate(&OAuthClient{}, &OAuthCode{}, &OAuthToken{})
	}},
	{8, "marketplace sort keys and indexes", func(tx *gorm.DB) error {
		if err := tx.AutoMigrate(&Listing{}); err != nil {
			return err
		}
		for _, ddl := range listingIndexes {
			if err := tx.Exec(ddl).Error; err != nil {
				return err
			}
		}
		if IsPostgres(tx) { // substring search on names (q) through a trigram index
			if err := tx.Exec(`CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public`).Error; err != nil {
				return fmt.Errorf("the marketplace's name search needs the pg_trgm extension: %w", err)
			}
			return tx.Exec(`CREATE INDEX IF NOT EXISTS idx_listings_domain_trgm ON listings USING gin (domain public.gin_trgm_ops)`).Error
		}
		return nil
	}},
	{9, "marketplace counters (Postgres)", func(tx *gorm.DB) error {
		if !IsPostgres(tx) {
			return nil
		}
		for _, ddl := range listingCountsDDL {
			if err := tx.Exec(ddl).Error; err != nil {
				return err
			}
		}
		return nil
	}},
	{10, "OAuth family revocation and client use", func(tx *gorm.DB) error {
		return tx.AutoMigrate(&OAuthCode{}, &OAuthClient{})
	}},
	{11, "owned domains, bulk operations, the cart and tool jobs", func(tx *gorm.DB) error {
		return tx.AutoMigrate(&SandboxName{}, &SandboxChange{}, &Domain{}, &BulkOp{}, &BulkItem{}, &CartItem{}, &ToolJob{})
	}},
}

// SchemaMigration records an applied migration.
type SchemaMigration struct {
	Version   int `gorm:"primaryKey;autoIncrement:false"`
	Name      string
	AppliedAt time.Time
}

// Migrate applies the migrations the database has not seen, each in its own
// transaction. On Postgres an advisory lock makes concurrent migrators (two
// replicas starting at once) take turns.
func Migrate(ctx context.Context, db *gorm.DB) error {
	db = db.WithContext(ctx)
	if IsPostgres(db) {
		conn, err := db.DB()
		if err != nil {
			return err
		}
		c, err := conn.Conn(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		const lockID = 0x646f6d61696e64 // "domaind"
		if _, err := c.ExecContext(ctx, "SELECT pg_advisory_lock($1)", lockID); err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		defer c.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lockID)
	}
	if err := db.AutoMigrate(&SchemaMigration{}); err != nil {
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
	for _, m := range migrations {
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

// IsPostgres reports whether db talks to Postgres (the alternative is SQLite).
func IsPostgres(db *gorm.DB) bool { return db.Dialector.Name() == "postgres" }
