package settlement

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/internal/period"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

// BenchmarkSettlementRun settles a week of completed orders from 1,000
// partners, each with a webhook endpoint (so every order.settled event is
// a delivery and a task through the outbox), first 10,000 orders and then
// 1,000,000, and reports the run's time and the process's peak heap for
// each: a run streams batches, so the heap should not grow with the
// orders. Run it with -benchtime 1x on real Postgres and Redis (make bench).
// DOMAIND_BENCH_SETTLEMENT_ORDERS sets the large run's orders, to compare
// two builds at a size that takes less time.
func BenchmarkSettlementRun(b *testing.B) {
	if os.Getenv("DOMAIND_TEST_DATABASE_URL") == "" {
		b.Skip("the settlement benchmark needs real Postgres: make bench sets DOMAIND_TEST_DATABASE_URL")
	}
	n := 1_000_000
	if v := os.Getenv("DOMAIND_BENCH_SETTLEMENT_ORDERS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10_000 {
			b.Fatalf("DOMAIND_BENCH_SETTLEMENT_ORDERS=%q: want a number of orders, at least 10000", v)
		}
	}
	for b.Loop() {
		small := settleOnce(b, 10_000, 1_000)
		large := settleOnce(b, n, 1_000)
		b.ReportMetric(large.elapsed.Seconds(), "s/run-1M")
		b.ReportMetric(float64(large.peakHeap)/float64(small.peakHeap), "heap-ratio-1M/10k")
		fmt.Printf("settlement run (%d lanes): %d orders of %d partners in %.1f s (%.0f orders/s), peak heap %.1f MiB; %d orders in %.1f s, peak heap %.1f MiB; heap ratio %.2f\n",
			Lanes, large.orders, large.partners, large.elapsed.Seconds(), float64(large.orders)/large.elapsed.Seconds(), mib(large.peakHeap),
			small.orders, small.elapsed.Seconds(), mib(small.peakHeap), float64(large.peakHeap)/float64(small.peakHeap))
		fmt.Printf("after the run, two workers' fan-outs enqueued the %d deliveries' tasks in %.1f s (%.0f tasks/s)\n",
			large.orders, large.fanOut.Seconds(), float64(large.orders)/large.fanOut.Seconds())
	}
}

type runFigures struct {
	orders, partners int
	elapsed          time.Duration
	peakHeap         uint64
	// fanOut is how long the fan-outs of the run's deliveries took after it.
	fanOut time.Duration
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
	db.Exec("ANALYZE") // as autovacuum would have

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

	fanOut := fanOutAll(b, db, ob, r.Client, n)

	var settled int64
	db.Model(&models.Order{}).Where("status = ? AND settled_period = ?", models.OrderSettled, week.Start).Count(&settled)
	statements, err := s.PeriodStatements(context.Background(), week.Start)
	totals := Totals(statements)
	if err != nil || settled != int64(n) || len(totals) != 1 || totals[0].Orders != n || totals[0].GrossCents != int64(n)*benchPrice {
		b.Fatalf("settled %d of %d orders; totals %+v, %v", settled, n, totals, err)
	}
	return runFigures{orders: n, partners: partners, elapsed: elapsed, peakHeap: peak.Load(), fanOut: fanOut}
}

// fanOutAll does the work of the run's fan-out tasks, as two workers
// would, and returns how long it took; it fails unless each of the n
// orders' deliveries got its task.
func fanOutAll(b *testing.B, db *gorm.DB, ob *outbox.Outbox, rdb redis.UniversalClient, n int) time.Duration {
	b.Helper()
	var entries []models.OutboxEntry
	if err := db.Where("task_type = ?", tasks.TypeWebhookFanOut).Find(&entries).Error; err != nil {
		b.Fatal(err)
	}
	webhooks := webhook.New(db, []byte("test-secret-key-0123456789abcdef"), nil, time.Now)
	var next atomic.Int64
	errs := make(chan error, 2)
	start := time.Now()
	for range 2 {
		go func() {
			for i := int(next.Add(1)) - 1; i < len(entries); i = int(next.Add(1)) - 1 {
				p, err := tasks.Decode[tasks.WebhookFanOutPayload](asynq.NewTask(entries[i].TaskType, entries[i].Payload))
				if err == nil {
					err = webhooks.FanOut(context.Background(), ob, p.DeliveryIDs)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	took := time.Since(start)
	// The fan-outs' own tasks wait in the queue too: no worker ran them.
	info, err := asynq.NewInspectorFromRedisClient(rdb).GetQueueInfo(tasks.QueueWebhooks)
	if err != nil || info.Pending != n+len(entries) {
		b.Fatalf("after the fan-outs the webhook queue holds %+v, %v; want the %d deliveries' tasks and the %d fan-outs'", info, err, n, len(entries))
	}
	return took
}

// benchPrice is every benchmark order's price.
const benchPrice = 12_345

// seedCompleted writes partners, each with a live webhook endpoint, and n
// orders among them that reached TRANSFER_COMPLETED in week, with their
// sales in the ledger (ledger.Sale's lines), in set-based SQL.
func seedCompleted(tb testing.TB, db *gorm.DB, week period.Period, n, partners int) {
	tb.Helper()
	commission := ledger.Share(benchPrice, 1500)
	var lines []string
	for _, l := range ledger.Sale(models.PaymentPartnerCollected, benchPrice, commission) {
		lines = append(lines, fmt.Sprintf("('%s', %d)", l.Account, l.AmountCents))
	}
	args := map[string]any{"n": n, "partners": partners, "start": week.Start, "completed": week.Start.Add(time.Hour),
		"price": benchPrice, "commission": commission}
	for _, q := range []string{
		`INSERT INTO partners (id, name, contact_email, status, commission_bps, created_at)
		SELECT 'prt_bench_' || lpad(i::text, 4, '0'), 'prt_bench_' || lpad(i::text, 4, '0'),
			'prt_bench_' || lpad(i::text, 4, '0') || '@partner.example', 'approved', 1500, @start
		FROM generate_series(0, @partners - 1) AS i`,
		`INSERT INTO webhook_endpoints (id, partner_id, environment, url, secret_sealed, active, created_at, updated_at)
		SELECT 'whe_' || id, id, 'live', 'https://hooks.partner.example/' || id, 'sealed', true, @start, @start FROM partners`,
		`INSERT INTO orders (public_id, partner_id, environment, listing_id, domain, status, review, sale_price_cents, currency,
			payment_model, buyer_email, buyer_name, buyer_country, external_payment_ref, commission_bps, commission_cents,
			transfer_completed_at, created_at, updated_at)
		SELECT 'ord_bench_' || lpad(i::text, 7, '0'), 'prt_bench_' || lpad((i % @partners)::text, 4, '0'), 'live', gen_random_uuid()::text,
			'settle-' || lpad(i::text, 7, '0') || '.com', 'TRANSFER_COMPLETED', 'none', @price, 'USD', 'partner_collected',
			'b@example.com', 'B', 'NL', 'x', 1500, @commission, @completed, @start, @completed
		FROM generate_series(0, @n - 1) AS i`,
		`INSERT INTO ledger_entries (txn_id, account, partner_id, environment, currency, amount_cents, kind, order_id, created_at)
		SELECT 'txn_' || o.public_id, l.account, o.partner_id, o.environment, 'USD', l.amount, 'sale', o.public_id, @start
		FROM orders o CROSS JOIN (VALUES ` + strings.Join(lines, ", ") + `) AS l(account, amount)`,
		// Each order's earlier events (recorded, transfer started, transfer
		// completed), delivered, as a week of business leaves them: the
		// tables a run writes to are not empty when it starts.
		`INSERT INTO events (id, partner_id, environment, type, data, created_at)
		SELECT 'evt_h' || k || '_' || o.public_id, o.partner_id, o.environment, 'order.history', '{}', o.created_at
		FROM orders o CROSS JOIN generate_series(1, 3) AS k`,
		`INSERT INTO webhook_deliveries (id, event_seq, endpoint_id, subject, followed, state, attempts, last_status, created_at, delivered_at, finished_at)
		SELECT 'whd_' || e.id, e.seq, 'whe_' || e.partner_id, substr(e.id, position('_ord_' in e.id) + 1), false, 'delivered', 1, 200,
			e.created_at, e.created_at, e.created_at
		FROM events e`,
	} {
		var err error
		if strings.Contains(q, "@") {
			err = db.Exec(q, args).Error
		} else {
			err = db.Exec(q).Error
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkTransactions1M asks for pages of one partner's transactions,
// with the totals of the whole filter, over a year of 1,000,000 ledger
// lines (250,000 sales, a third of them refunded), after the scheduler's
// daily roll-ups, and reports the p50 and p99 of a page for the filters a
// partner's dashboard uses. Run it with -benchtime 1x on real Postgres and
// Redis (make bench).
func BenchmarkTransactions1M(b *testing.B) {
	if os.Getenv("DOMAIND_TEST_DATABASE_URL") == "" {
		b.Skip("the transactions benchmark needs real Postgres: make bench sets DOMAIND_TEST_DATABASE_URL")
	}
	db := modelstest.NewDB(b)
	r := platformtest.NewRedis(b)
	ob := outbox.New(db, r.Client, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer ob.Close()
	year := time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC)
	now := year.AddDate(1, 0, 0).Add(12 * time.Hour)
	clock := func() time.Time { return now }
	orders := order.New(db, ob, []byte("test-secret-key-0123456789abcdef"), order.Options{QuoteTTL: time.Minute}, clock)
	s := New(db, ob, orders, period.Week, []byte("test-secret-key-0123456789abcdef"), clock)
	lines := seedYear(b, db, year, 250_000)
	if _, err := s.RollUp(context.Background()); err != nil {
		b.Fatal(err)
	}
	db.Exec("ANALYZE") // as autovacuum would have

	from, to := year.AddDate(0, 3, 0).Add(7*time.Hour), year.AddDate(0, 9, 0).Add(15*time.Hour)
	cases := []struct {
		name string
		f    TransactionFilter
	}{
		{"everything", TransactionFilter{}},
		{"six months, part days at the ends", TransactionFilter{From: &from, To: &to}},
		{"hosted", TransactionFilter{PaymentModel: models.PaymentHosted}},
		{"by order status (no roll-up)", TransactionFilter{OrderStatus: models.OrderSettled}},
	}
	for b.Loop() {
		for _, c := range cases {
			f := c.f
			f.PartnerID, f.Environment = benchPartner, models.EnvLive
			var took []time.Duration
			for i := range 41 {
				start := time.Now()
				txns, next, totals, err := s.Transactions(context.Background(), f)
				if i > 0 { // the first warms the cache
					took = append(took, time.Since(start))
				}
				if err != nil || len(txns) != pagecursor.DefaultLimit || next == "" || len(totals) != 1 {
					b.Fatalf("%s: %d transactions, next %q, totals %+v, %v", c.name, len(txns), next, totals, err)
				}
				f.Cursor = ""
				if i%2 == 1 {
					f.Cursor = next // every other page is a next page
				}
			}
			slices.Sort(took)
			p50, p99 := took[len(took)/2], took[len(took)*99/100]
			b.ReportMetric(float64(p50.Microseconds())/1000, "ms-p50-"+strings.ReplaceAll(strings.Fields(c.name)[0], ",", ""))
			fmt.Printf("transactions over %d ledger lines, %s: p50 %.1f ms, p99 %.1f ms\n", lines, c.name,
				float64(p50.Microseconds())/1000, float64(p99.Microseconds())/1000)
		}
	}
}

// benchPartner owns the transactions benchmark's ledger.
const benchPartner = "prt_bench_ledger"

// seedYear writes n sales of benchPartner spread over the year from start
// (one in five on the hosted checkout, one in three refunded a day later)
// with their ledger lines, in set-based SQL, and returns how many lines
// it wrote.
func seedYear(b *testing.B, db *gorm.DB, start time.Time, n int) int64 {
	b.Helper()
	steps := []string{
		`INSERT INTO orders (public_id, partner_id, environment, listing_id, domain, status, review, sale_price_cents, currency,
			payment_model, buyer_email, buyer_name, buyer_country, external_payment_ref, refunded_cents, commission_bps, commission_cents,
			created_at, updated_at)
		SELECT 'ord_y_' || i, @partner, 'live', 'lst_' || i, 'year-' || i || '.com',
			CASE WHEN i % 3 = 0 THEN 'REFUNDED' WHEN i % 2 = 0 THEN 'SETTLED' ELSE 'TRANSFER_COMPLETED' END, 'none',
			1000 + i % 9000, 'USD', CASE WHEN i % 5 = 0 THEN 'hosted' ELSE 'partner_collected' END, 'b@example.com', 'B', 'NL', 'x',
			CASE WHEN i % 3 = 0 THEN 1000 + i % 9000 ELSE 0 END, 1500, ((1000 + i % 9000) * 15 + 50) / 100,
			CAST(@start AS timestamptz) + (i * interval '1 second' * 31536000 / @n), CAST(@start AS timestamptz)
		FROM generate_series(1, @n) AS i`,
		// A sale's lines (ledger.Sale), and a refund's a day later (ledger.Refund).
		`INSERT INTO ledger_entries (txn_id, account, partner_id, environment, currency, amount_cents, kind, order_id, created_at)
		SELECT 'txn_s_' || o.public_id, CASE WHEN a.account <> 'partner' THEN a.account
			WHEN o.payment_model = 'hosted' THEN 'partner_payable' ELSE 'partner_receivable' END, o.partner_id, o.environment, o.currency,
			CASE a.account WHEN 'sales' THEN -o.sale_price_cents WHEN 'commission' THEN o.commission_cents
				WHEN 'cash' THEN o.sale_price_cents ELSE CASE WHEN o.payment_model = 'hosted' THEN -o.commission_cents
				ELSE o.sale_price_cents - o.commission_cents END END,
			'sale', o.public_id, o.created_at
		FROM orders o CROSS JOIN (VALUES ('sales'), ('commission'), ('partner'), ('cash')) AS a(account)
		WHERE o.partner_id = @partner AND (a.account <> 'cash' OR o.payment_model = 'hosted')`,
		`INSERT INTO ledger_entries (txn_id, account, partner_id, environment, currency, amount_cents, kind, order_id, created_at)
		SELECT 'txn_r_' || o.public_id, CASE WHEN a.account <> 'partner' THEN a.account
			WHEN o.payment_model = 'hosted' THEN 'partner_payable' ELSE 'partner_receivable' END, o.partner_id, o.environment, o.currency,
			-CASE a.account WHEN 'sales' THEN -o.sale_price_cents WHEN 'commission' THEN o.commission_cents
				WHEN 'cash' THEN o.sale_price_cents ELSE CASE WHEN o.payment_model = 'hosted' THEN -o.commission_cents
				ELSE o.sale_price_cents - o.commission_cents END END,
			'refund', o.public_id, o.created_at + interval '1 day'
		FROM orders o CROSS JOIN (VALUES ('sales'), ('commission'), ('partner'), ('cash')) AS a(account)
		WHERE o.partner_id = @partner AND o.status = 'REFUNDED' AND (a.account <> 'cash' OR o.payment_model = 'hosted')`,
	}
	args := map[string]any{"partner": benchPartner, "start": start, "n": n}
	for _, q := range steps {
		if err := db.Exec(q, args).Error; err != nil {
			b.Fatal(err)
		}
	}
	var lines int64
	db.Model(&models.LedgerEntry{}).Where("partner_id = ?", benchPartner).Count(&lines)
	return lines
}
