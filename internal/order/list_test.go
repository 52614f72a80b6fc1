package order

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/pagecursor/pagecursortest"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// A partner's orders walk page by page each once, two to a second among
// 99 other partners' 198, and a page in the middle of the list reads its
// own rows by the partner's index, in its order, not every newer order.
func TestListDeepPageReadsItsOwnRows(t *testing.T) {
	t.Parallel()
	s, db := newBareService(t, time.Now)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seedOrders(t, db, 20_000, func(i int, o *models.Order) {
		o.PartnerID, o.Environment, o.CreatedAt = fmt.Sprintf("prt_%d", i%100), models.EnvSandbox, start.Add(time.Duration(i/200)*time.Second)
	})
	ctx := context.Background()
	page, cursors := pagecursortest.Walk(t, func(cursor string) ([]View, string, error) {
		return s.List(ctx, Filter{PartnerID: "prt_0", Environment: models.EnvSandbox, Limit: 25, Cursor: cursor})
	})
	seen := map[string]int{}
	for _, o := range page {
		seen[o.PublicID]++
	}
	if len(seen) != 200 {
		t.Errorf("walked %d orders, want the partner's 200", len(seen))
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
	// Without public_id at its end, the partner's index left each page
	// to sort the orders of its last second (an incremental sort); the
	// filter "created_at < ? OR …" read the 100 newer orders first.
	queries := modelstest.CaptureQueries(t, db, `FROM "orders"`)
	if _, _, err := s.List(ctx, Filter{PartnerID: "prt_0", Environment: models.EnvSandbox, Limit: 25, Cursor: cursors[len(cursors)/2]}); err != nil || len(queries()) != 1 {
		t.Fatalf("%v; %d queries of the orders, want 1", err, len(queries()))
	}
	modelstest.ReadsByIndex(t, db, queries()[0], "idx_orders_partner_env_created")
}

// Ops' pages of every partner's orders, newest first, read about their
// own rows: the whole list by the index of the orders' creation, and a
// status few orders are in by the index of the unsettled orders by
// status, also from a plan made for any values.
func TestOpsPagesReadTheirOwnRows(t *testing.T) {
	t.Parallel()
	s, db := newBareService(t, time.Now)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var moving []string // newest first
	seedOrders(t, db, 3000, func(i int, o *models.Order) {
		o.PartnerID, o.Status, o.CreatedAt = fmt.Sprintf("prt_%d", i%3), models.OrderSettled, start.Add(time.Duration(i)*time.Second)
		if i%100 == 5 {
			o.Status = models.OrderTransferInProgress
			moving = append([]string{o.PublicID}, moving...)
		}
	})
	ctx := context.Background()
	all, cursors := pagecursortest.Walk(t, func(cursor string) ([]View, string, error) {
		return s.List(ctx, Filter{Limit: 100, Cursor: cursor})
	})
	if len(all) != 3000 {
		t.Errorf("walked %d orders, want 3000", len(all))
	}
	page, _, err := s.List(ctx, Filter{Status: models.OrderTransferInProgress, Limit: 10})
	if err != nil || len(page) != 10 {
		t.Fatalf("%d orders in transfer, %v; want 10", len(page), err)
	}
	for i, o := range page {
		if o.PublicID != moving[i] {
			t.Errorf("order %d in transfer is %s, want %s", i, o.PublicID, moving[i])
		}
	}
	if !models.IsPostgres(db) {
		return // the plans are Postgres's
	}
	if err := db.Exec("ANALYZE orders").Error; err != nil {
		t.Fatal(err)
	}
	read := modelstest.RowsReadBy(t, db, `FROM "orders"`, func() error {
		_, _, err := s.List(ctx, Filter{Limit: 100, Cursor: cursors[len(cursors)/2]})
		return err
	})
	if read > 101 {
		t.Errorf("a page of 100 of every order read %v rows; want at most 101", read)
	}
	statements := modelstest.CaptureStatements(t, db, `FROM "orders"`)
	if _, _, err := s.List(ctx, Filter{Status: models.OrderTransferInProgress, Limit: 10}); err != nil || len(statements()) != 1 {
		t.Fatalf("%v; %d queries of the orders, want 1", err, len(statements()))
	}
	root, plan := modelstest.ExplainGeneric(t, db, statements()[0])
	if read := root.RowsRead(); read > 11 {
		t.Errorf("a page of 10 orders in transfer read %v rows from a plan for any values; want at most 11\n%s", read, plan)
	}
}

// newBareService is a Service on a fresh database of its own, with no
// partners and no ledger check at the end: for tests that write their
// orders as they want them, without sales. It returns the database too.
func newBareService(t *testing.T, now func() time.Time) (*Service, *gorm.DB) {
	t.Helper()
	db := modelstest.NewDB(t)
	ob := outbox.New(db, platformtest.NewRedis(t).Client, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { ob.Close() })
	return New(db, ob, []byte("test-secret-key-0123456789abcdef"), Options{}, now), db
}

// seedOrders writes n orders, ord_000000 on: each a sale of 10 USD the
// partner collected, live, externally paid, made at the Unix epoch, as
// shape changes it for the i-th.
func seedOrders(t *testing.T, db *gorm.DB, n int, shape func(i int, o *models.Order)) {
	t.Helper()
	orders := make([]models.Order, n)
	for i := range orders {
		orders[i] = models.Order{PublicID: fmt.Sprintf("ord_%06d", i), PartnerID: "prt_a", Environment: models.EnvLive,
			ListingID: "lst", Domain: fmt.Sprintf("n%06d.com", i), Status: models.OrderExternallyPaid, Review: models.ReviewNone,
			SalePriceCents: 1000, Currency: "USD", PaymentModel: models.PaymentPartnerCollected, BuyerEmail: "b@example.com",
			BuyerName: "B", BuyerCountry: "US", CreatedAt: time.Unix(0, 0).UTC()}
		shape(i, &orders[i])
	}
	if err := db.CreateInBatches(orders, 1000).Error; err != nil {
		t.Fatal(err)
	}
}

// Every order status a filter may name has its written-out condition,
// and nothing else has one.
func TestEveryStatusIsWrittenOut(t *testing.T) {
	modelstest.WrittenOut(t, models.OrdersIn, "status", Statuses)
	if cond, _ := models.OrdersIn(models.OrderTransferCompleted); cond != models.OrdersUnsettled {
		t.Errorf("the unsettled orders' condition is %q, the settlement's %q", cond, models.OrdersUnsettled)
	}
}
