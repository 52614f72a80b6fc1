package models_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

func TestMigrateIsIdempotentAndSerialised(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t) // migrated once already
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = models.Migrate(context.Background(), db) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("migrator %d: %v", i, err)
		}
	}
	var applied []models.SchemaMigration
	db.Order("version").Find(&applied)
	if len(applied) == 0 || applied[0].Version != 1 {
		t.Fatalf("applied = %+v", applied)
	}
	seen := map[int]bool{}
	for _, m := range applied {
		if seen[m.Version] {
			t.Errorf("migration %d recorded twice", m.Version)
		}
		seen[m.Version] = true
	}
	if !db.Migrator().HasTable(&models.OutboxEntry{}) || !db.Migrator().HasIndex(&models.OutboxEntry{}, "idx_outbox_pending") {
		t.Errorf("outbox table or its pending index missing")
	}
}

func TestCheckMigrated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		prepare func(db *gorm.DB) error
		want    error  // nil, models.ErrNotMigrated or models.ErrSchemaNewer
		wantMsg string // part of the message
	}{
		{"never migrated", func(*gorm.DB) error { return nil },
			models.ErrNotMigrated, `database is not migrated: run "domaind migrate"`},
		{"a step missing", func(db *gorm.DB) error { return models.MigrateTo(ctx, db, models.LastVersion-1) },
			models.ErrNotMigrated, fmt.Sprintf(`run "domaind migrate" (steps not applied: %d)`, models.LastVersion)},
		{"migrated", func(db *gorm.DB) error { return models.Migrate(ctx, db) }, nil, ""},
		{"newer than the binary", func(db *gorm.DB) error {
			if err := models.Migrate(ctx, db); err != nil {
				return err
			}
			return db.Create(&models.SchemaMigration{Version: 999, Name: "from the future"}).Error
		}, models.ErrSchemaNewer, `database is newer than this binary: it has steps this binary does not know (999 "from the future")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, _ := modelstest.NewEmptyDB(t)
			must(t, tc.prepare(db))
			err := models.CheckMigrated(ctx, db)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("CheckMigrated = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("CheckMigrated = %v, want %q containing %q", err, tc.want, tc.wantMsg)
			}
		})
	}
}
