package tldsync_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/registry/sandbox"
	"github.com/domaind/domaind/internal/tldsync"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// flaky is the sandbox with one TLD whose rules cannot be read, as when a
// registry answers 5xx for one request.
type flaky struct {
	*sandbox.Sandbox
	broken string
}

func (f flaky) TLDInfo(ctx context.Context, tld string) (registry.TLDInfo, error) {
	if tld == f.broken {
		return registry.TLDInfo{}, errors.New("503 from the registry")
	}
	return f.Sandbox.TLDInfo(ctx, tld)
}

func seeded(t *testing.T) (*sandbox.Sandbox, *gorm.DB) {
	t.Helper()
	db := modelstest.NewDB(t)
	if _, err := sandbox.Seed(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return sandbox.New(db, 0), db
}

func TestRunStoresEveryTLDAndItsPrices(t *testing.T) {
	t.Parallel()
	sb, db := seeded(t)
	tlds, _ := sb.TLDs(context.Background())
	res, err := tldsync.Run(context.Background(), db, sb, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if res.Synced != len(tlds) || res.Failed != 0 || len(tlds) < 60 {
		t.Fatalf("result = %+v for %d TLDs", res, len(tlds))
	}
	var com models.TLD
	if err := db.First(&com, "name = ?", "com").Error; err != nil {
		t.Fatal(err)
	}
	if com.Source != "sandbox" || com.Metadata.Provider != "Verisign" || len(com.Metadata.PeriodsMonths) == 0 || com.Stale(time.Now()) {
		t.Errorf("com = %+v", com)
	}
	var prices []models.TLDPrice
	db.Where("tld = ?", "com").Order("op").Find(&prices)
	if len(prices) != 4 {
		t.Fatalf("com has %d price rows, want 4", len(prices))
	}
	for _, p := range prices {
		if p.Op != registry.OpRestore && (p.Cents == nil || *p.Cents <= 0) {
			t.Errorf("com %s price = %v", p.Op, p.Cents)
		}
	}
	var rows int64
	db.Model(&models.TLDPrice{}).Count(&rows)
	if rows != int64(4*len(tlds)) {
		t.Errorf("price rows = %d, want %d (four per TLD)", rows, 4*len(tlds))
	}

	// A second run updates in place.
	if _, err := tldsync.Run(context.Background(), db, sb, quiet); err != nil {
		t.Fatal(err)
	}
	db.Model(&models.TLDPrice{}).Count(&rows)
	if rows != int64(4*len(tlds)) {
		t.Errorf("after a second run price rows = %d", rows)
	}
}

func TestRunKeepsAFailedTLDAndMarksDroppedOnes(t *testing.T) {
	t.Parallel()
	sb, db := seeded(t)
	if _, err := tldsync.Run(context.Background(), db, sb, quiet); err != nil {
		t.Fatal(err)
	}
	var before models.TLD
	db.First(&before, "name = ?", "io")

	// The provider stops selling .xyz, and .io's rules cannot be read.
	db.Delete(&models.SandboxTLD{}, "name = ?", "xyz")
	res, err := tldsync.Run(context.Background(), db, flaky{sb, "io"}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 1 || res.Unavailable != 1 {
		t.Errorf("result = %+v, want 1 failed and 1 unavailable", res)
	}
	var io, xyz models.TLD
	db.First(&io, "name = ?", "io")
	db.First(&xyz, "name = ?", "xyz")
	if !io.LastSyncedAt.Equal(before.LastSyncedAt) || io.Unavailable {
		t.Errorf("io after a failed read = %+v; want its previous row kept", io)
	}
	if !xyz.Unavailable || !xyz.Stale(time.Now()) {
		t.Errorf("xyz = %+v; want unavailable and stale", xyz)
	}
	if !io.Stale(io.LastSyncedAt.Add(25*time.Hour)) || io.Stale(io.LastSyncedAt.Add(23*time.Hour)) {
		t.Errorf("stale must turn true after 24 h without a successful sync")
	}
}

func TestRunFailsWhenTheProviderIsDown(t *testing.T) {
	t.Parallel()
	_, db := seeded(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	slow := sandbox.New(db, time.Hour)
	if _, err := tldsync.Run(ctx, db, slow, quiet); err == nil {
		t.Fatal("want an error when the provider cannot list its TLDs")
	}
	var n int64
	db.Model(&models.TLD{}).Count(&n)
	if n != 0 {
		t.Errorf("%d TLD rows written by a failed sync", n)
	}
}
