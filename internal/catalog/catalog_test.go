package catalog

import (
	"context"
	"testing"
	"time"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

func TestCatalogReloadsAfterItsTTL(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	ctx := context.Background()
	cents := int64(1099)
	db.Create(&models.TLD{Name: "com", Source: "sandbox", LastSyncedAt: time.Now()})
	db.Create(&models.TLDPrice{TLD: "com", Op: "register", Cents: &cents, Currency: "USD"})
	db.Create(&models.TLDPrice{TLD: "com", Op: "restore", Currency: "USD"})

	cached := New(db, time.Hour)
	first, err := cached.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := first.Price("com", "register"); !ok || *p != 1099 {
		t.Errorf("register = %v %v", p, ok)
	}
	if p, ok := first.Price("com", "restore"); !ok || p != nil {
		t.Errorf("restore = %v %v, want a row with a null price", p, ok)
	}
	if _, ok := first.Price("net", "register"); ok {
		t.Error("a TLD without rows has a price")
	}
	db.Create(&models.TLD{Name: "net", Source: "sandbox", LastSyncedAt: time.Now()})
	if again, _ := cached.Get(ctx); again != first {
		t.Error("a fresh snapshot was reloaded")
	}
	expired := New(db, 0)
	if s, _ := expired.Get(ctx); len(s.TLDs) != 2 {
		t.Errorf("reloaded catalog has %d TLDs, want 2", len(s.TLDs))
	}
}
