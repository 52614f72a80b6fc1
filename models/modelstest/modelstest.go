// Package modelstest hands tests an isolated, migrated database: a Postgres
// schema of its own when DOMAIND_TEST_DATABASE_URL is set, a SQLite file otherwise.
package modelstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/platform"
	"github.com/domaind/domaind/models"
)

// NewDB returns a migrated database that only this test uses, removed at cleanup.
func NewDB(tb testing.TB) *gorm.DB {
	tb.Helper()
	db, _ := NewDBWithURL(tb)
	return db
}

// NewDBWithURL is NewDB that also returns a URL other processes can open the
// same database with ("" for SQLite, whose path is then returned instead).
func NewDBWithURL(tb testing.TB) (*gorm.DB, string) {
	tb.Helper()
	db, where := NewEmptyDB(tb)
	if err := models.Migrate(context.Background(), db); err != nil {
		tb.Fatalf("migrate: %v", err)
	}
	return db, where
}

// NewEmptyDB is NewDBWithURL without the migrations: a database with no
// tables, for tests of the migrations themselves.
func NewEmptyDB(tb testing.TB) (*gorm.DB, string) {
	tb.Helper()
	base := os.Getenv("DOMAIND_TEST_DATABASE_URL")
	var db *gorm.DB
	var where string
	if base == "" {
		where = filepath.Join(tb.TempDir(), "test.db")
		var err error
		if db, err = platform.OpenSQLite(where); err != nil {
			tb.Fatalf("open sqlite: %v", err)
		}
	} else {
		db, where = newSchema(tb, base)
	}
	tb.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return db, where
}

func newSchema(tb testing.TB, base string) (*gorm.DB, string) {
	tb.Helper()
	admin, err := platform.OpenPostgres(base, config.DefaultDatabaseMaxConns)
	if err != nil {
		tb.Fatalf("open %s: %v", base, err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		if sqlDB, err := admin.DB(); err == nil {
			sqlDB.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("parse DOMAIND_TEST_DATABASE_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := platform.OpenPostgres(u.String(), config.DefaultDatabaseMaxConns)
	if err != nil {
		tb.Fatalf("open schema %s: %v", schema, err)
	}
	return db, u.String()
}

// Reopen opens another connection pool to the database at where (a URL or
// a SQLite file's path, as NewDBWithURL returns), closed when the test
// ends: what a second process would have.
func Reopen(tb testing.TB, where string) *gorm.DB {
	tb.Helper()
	open := platform.OpenSQLite
	if strings.HasPrefix(where, "postgres") {
		open = func(url string) (*gorm.DB, error) { return platform.OpenPostgres(url, config.DefaultDatabaseMaxConns) }
	}
	db, err := open(where)
	if err != nil {
		tb.Fatalf("open %s: %v", where, err)
	}
	tb.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return db
}
