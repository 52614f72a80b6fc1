package settlement

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/period"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// BenchmarkSettlementRun settles a week of completed orders from 1,000
// partners, each with a webhook endpoint (so every order.settled event is
// a delivery and a task through the outbox), first 10,000 orders and then
// 100,000, and reports the run's time and the process's peak heap for
// each: a run streams batches, so the heap should not grow with the
// orders. Run it with -benchtime 1x on real Postgres and Redis (make bench).
func BenchmarkSettlementRun(b *testing.B) {
	if os.Getenv("DOMAIND_TEST_DATABASE_URL") == "" {
		b.Skip("the settlement benchmark needs real Postgres: make bench sets DOMAIND_TEST_DATABASE_URL")
	}
	for b.Loop() {
		small := settleOnce(b, 10_000, 1_000)
		large := settleOnce(b, 100_000, 1_000)
		b.ReportMetric(large.elapsed.Seconds(), "s/run-100k")
		b.ReportMetric(float64(large.peakHeap)/float64(small.peakHeap), "heap-ratio-100k/10k")
		fmt.Printf("settlement run: %d orders of %d partners in %.1f s (%.0f orders/s), peak heap %.1f MiB; %d orders in %.1f s, peak heap %.1f MiB; heap ratio %.2f\n",
			large.orders, large.partners, large.elapsed.Seconds(), float64(large.orders)/large.elapsed.Seconds(), mib(large.peakHeap),
			small.orders, small.elapsed.Seconds(), mib(small.peakHeap), float64(large.peakHeap)/float64(small.peakHeap))
	}
}

type runFigures struct {
	orders, partners int
	elapsed          time.Duration
	peakHeap         uint64
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// settleOnce seeds n completed orders of partners in a database of its
// own, runs their week's settlement and checks that each was settled.
func settleOnce(b *testing.B, n, partners int) runFigures {
	b.Helper()
	db := modelstest.NewDB(b)
	r := platformtest.NewRedis(b)
	ob := outbox.New(db, r.Client, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer ob.Close()
	week := period.Week.Of(time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC))
	later := func() time.Time { return week.End.Add(3 * time.Hour) }
	orders := order.New(db, ob, []byte("test-secret-key-0123456789abcdef"), order.Options{QuoteTTL: time.Minute, ReviewThresholdCents: 1 << 40}, later)
	s := New(db, ob, orders, period.Week, []byte("test-secret-key-0123456789abcdef"), later)
	seedCompleted(b, db, week, n, partners)

	run, err := s.Request(context.Background(), week.Start, TriggerOps)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	if err := s.Run(context.Background(), run.ID); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	close(stop)
	<-sampled

	var settled int64
	db.Model(&models.Order{}).Where("status = ? AND settled_period = ?", models.OrderSettled, week.Start).Count(&settled)
	totals, err := s.allTotals(week.Start)
	if err != nil || settled != int64(n) || len(totals) != 1 || totals[0].Orders != n || totals[0].GrossCents != int64(n)*benchPrice {
		b.Fatalf("settled %d of %d orders; totals %+v, %v", settled, n, totals, err)
	}
	return runFigures{orders: n, partners: partners, elapsed: elapsed, peakHeap: peak.Load()}
}

// benchPrice is every benchmark order's price.
const benchPrice = 12_345

// allTotals adds up every statement of the period starting at start.
func (s *Service) allTotals(start time.Time) ([]Total, error) {
	var all []Statement
	for cursor := ""; ; {
		page, next, err := s.Statements(context.Background(), StatementFilter{PeriodStart: &start, Limit: MaxLimit, Cursor: cursor})
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if cursor = next; next == "" {
			return Totals(all), nil
		}
	}
}

// seedCompleted writes partners, each with a live webhook endpoint, and n
// orders among them that reached TRANSFER_COMPLETED in week, with their
// sales in the ledger.
func seedCompleted(b *testing.B, db *gorm.DB, week period.Period, n, partners int) {
	b.Helper()
	var ps []models.Partner
	var endpoints []models.WebhookEndpoint
	for i := range partners {
		id := fmt.Sprintf("prt_bench_%04d", i)
		ps = append(ps, models.Partner{ID: id, Name: id, ContactEmail: id + "@partner.example", Status: models.PartnerApproved,
			CommissionBPS: 1500, CreatedAt: week.Start})
		endpoints = append(endpoints, models.WebhookEndpoint{ID: "whe_" + id, PartnerID: id, Environment: models.EnvLive,
			URL: "https://hooks.partner.example/" + id, SecretSealed: []byte("sealed"), Active: true, CreatedAt: week.Start, UpdatedAt: week.Start})
	}
	if err := db.CreateInBatches(ps, 500).Error; err != nil {
		b.Fatal(err)
	}
	if err := db.CreateInBatches(endpoints, 500).Error; err != nil {
		b.Fatal(err)
	}
	completed := week.Start.Add(time.Hour)
	commission := ledger.Share(benchPrice, 1500)
	const chunk = 2_000
	for from := 0; from < n; from += chunk {
		var orders []models.Order
		var lines []models.LedgerEntry
		for i := from; i < min(from+chunk, n); i++ {
			o := models.Order{PublicID: fmt.Sprintf("ord_bench_%07d", i), PartnerID: ps[i%partners].ID, Environment: models.EnvLive,
				ListingID: models.NewID(), Domain: fmt.Sprintf("settle-%07d.com", i), Status: models.OrderTransferCompleted,
				Review: models.ReviewNone, SalePriceCents: benchPrice, Currency: "USD", PaymentModel: models.PaymentPartnerCollected,
				BuyerEmail: "b@example.com", BuyerName: "B", BuyerCountry: "NL", ExternalPaymentRef: "x", CommissionBPS: 1500,
				CommissionCents: commission, TransferCompletedAt: &completed, CreatedAt: week.Start, UpdatedAt: completed}
			orders = append(orders, o)
			for _, l := range ledger.Sale(o.PaymentModel, o.SalePriceCents, o.CommissionCents) {
				lines = append(lines, models.LedgerEntry{TxnID: "txn_" + o.PublicID, Account: l.Account, PartnerID: o.PartnerID,
					Environment: o.Environment, Currency: "USD", AmountCents: l.AmountCents, Kind: ledger.KindSale, OrderID: &o.PublicID,
					CreatedAt: week.Start})
			}
		}
		if err := db.CreateInBatches(orders, 1_000).Error; err != nil {
			b.Fatal(err)
		}
		if err := db.CreateInBatches(lines, 2_000).Error; err != nil {
			b.Fatal(err)
		}
	}
}
