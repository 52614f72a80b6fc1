package order

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// A partner's orders walk page by page each once, two to a second, and a
// page in the middle of the list reads about its own rows, not every
// newer order.
func TestListDeepPageReadsItsOwnRows(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	ob := outbox.New(db, platformtest.NewRedis(t).Client, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { ob.Close() })
	s := New(db, ob, []byte("test-secret-key-0123456789abcdef"), Options{}, time.Now)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var orders []models.Order
	for i := range 4000 {
		partner := "prt_a"
		if i%4 == 3 {
			partner = "prt_b"
		}
		orders = append(orders, models.Order{PublicID: fmt.Sprintf("ord_%06d", i), PartnerID: partner, Environment: models.EnvSandbox,
			ListingID: "lst", Domain: fmt.Sprintf("n%06d.com", i), Status: models.OrderExternallyPaid, Review: models.ReviewNone,
			SalePriceCents: 1000, Currency: "USD", PaymentModel: models.PaymentPartnerCollected, BuyerEmail: "b@example.com", BuyerName: "B",
			BuyerCountry: "US", CreatedAt: start.Add(time.Duration(i/2) * time.Second)})
	}
	if err := db.CreateInBatches(orders, 1000).Error; err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	seen := map[string]int{}
	var cursors []string
	for cursor := ""; ; {
		page, next, err := s.List(ctx, Filter{PartnerID: "prt_a", Environment: models.EnvSandbox, Limit: 100, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page {
			seen[o.PublicID]++
		}
		if cursor = next; cursor == "" {
			break
		}
		cursors = append(cursors, cursor)
	}
	if len(seen) != 3000 {
		t.Errorf("walked %d orders, want the partner's 3000", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("order %s walked %d times", id, n)
		}
	}
	if !models.IsPostgres(db) {
		return // the plan is Postgres's
	}
	if err := db.Exec("ANALYZE orders").Error; err != nil {
		t.Fatal(err)
	}
	// The page and the next one's first (101), the rest of its cursor's
	// second, filtered out, and the second the page ends in, whole, for
	// the sort by id within it: 105. The filter "created_at < ? OR …"
	// read the 1,500 newer orders first.
	read := modelstest.RowsReadBy(t, db, `FROM "orders"`, func() error {
		_, _, err := s.List(ctx, Filter{PartnerID: "prt_a", Environment: models.EnvSandbox, Limit: 100, Cursor: cursors[len(cursors)/2]})
		return err
	})
	if read > 110 {
		t.Errorf("a page of 100 in the middle of the list read %v rows; want at most 110", read)
	}
}
