package models_test

import (
	"context"
	"sync"
	"testing"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

func TestMigrateIsIdempotentAndSerialised(t *testing.T) {
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
