package settlement

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ledger/ledgertest"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/period"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

type world struct {
	db     *gorm.DB
	orders *order.Service
	s      *Service
	now    time.Time
}

// The period the tests settle: Monday 2026-11-23, with periods of a day.
var (
	day     = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	nextDay = day.AddDate(0, 0, 1)
)

func newWorld(t *testing.T) *world {
	t.Helper()
	db := modelstest.NewDB(t)
	ledgertest.CheckAtEnd(t, db)
	r := platformtest.NewRedis(t)
	ob := outbox.New(db, r.Client, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { ob.Close() })
	w := &world{db: db, now: day.Add(9 * time.Hour)}
	clock := func() time.Time { return w.now }
	w.orders = order.New(db, ob, []byte("test-secret-key-0123456789abcdef"), order.Options{QuoteTTL: 10 * time.Minute, ReviewThresholdCents: 10_000_000}, clock)
	length, _ := period.ParseLength("day")
	w.s = New(db, ob, w.orders, length, []byte("test-secret-key-0123456789abcdef"), clock)
	for id, bps := range map[string]int{"prt_a": 1500, "prt_b": 1000} {
		if err := db.Create(&models.Partner{ID: id, Name: id, ContactEmail: id + "@example.com", Status: "approved",
			CommissionBPS: bps, CreatedAt: w.now}).Error; err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// sell lists domain at price and records an order of partnerID for it
// (partner-collected, or on the hosted checkout).
func (w *world) sell(t *testing.T, partnerID, domain string, price int64, hosted bool) string {
	t.Helper()
	ctx := context.Background()
	if err := w.db.Create(&models.SandboxListing{ID: models.NewID(), Domain: domain, TLD: "com", BINCents: &price,
		Currency: "USD", CreatedAt: w.now}).Error; err != nil {
		t.Fatal(err)
	}
	buyer := order.Buyer{Email: "ada@example.com", Name: "Ada Buyer", Country: "NL"}
	if hosted {
		cs := models.CheckoutSession{ID: "cs_" + models.NewID()[:8], PartnerID: partnerID, Environment: models.EnvSandbox, Domain: domain,
			ReturnURL: "https://shop.test/thanks", CancelURL: "https://shop.test/", ExpiresAt: w.now.Add(time.Hour), CreatedAt: w.now}
		if err := w.db.Create(&cs).Error; err != nil {
			t.Fatal(err)
		}
		p := order.HostedPayment{Session: cs, Provider: "sandbox", PriceCents: price, Currency: "USD", Buyer: buyer}
		if err := w.orders.ReserveHosted(ctx, &p); err != nil {
			t.Fatal(err)
		}
		p.ChargeID, p.CardLast4 = "ch_test_"+domain, "4242"
		v, err := w.orders.RecordHosted(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return v.PublicID
	}
	v, err := w.orders.Record(ctx, partnerID, models.EnvSandbox, order.NewOrder{Domain: domain, ExpectedPrice: &price, Currency: "USD",
		ExternalPaymentRef: "pay_" + domain, Buyer: &buyer})
	if err != nil {
		t.Fatal(err)
	}
	return v.PublicID
}

// deliver takes order id through its transfer to TRANSFER_COMPLETED now.
func (w *world) deliver(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	if _, err := w.orders.Move(ctx, id, order.StartTransfer, order.MoveInput{Recipient: "buyer-registrar"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.orders.Move(ctx, id, order.ConfirmDelivery, order.MoveInput{}); err != nil {
		t.Fatal(err)
	}
}

// day23 sells and delivers the test's orders of 2026-11-23, and some that
// the period's run must leave alone; it returns the ids settled.
func (w *world) day23(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	a1 := w.sell(t, "prt_a", "thousand.com", 100_000, false) // commission 15,000; owes 85,000
	a2 := w.sell(t, "prt_a", "refunded-part.com", 33_333, false)
	// 15 % of 333.33 is 49.9995 → 5,000 cents; a refund of 33.33 reverses
	// 5,000 × 3,333 / 33,333 = 499.95 → 500 of it: commission 4,500, sales
	// 30,000, owed 25,500.
	if _, err := w.orders.Refund(ctx, "prt_a", models.EnvSandbox, order.NewRefund{OrderID: a2, Reason: "part", AmountCents: ptr(int64(3_333))}); err != nil {
		t.Fatal(err)
	}
	a3 := w.sell(t, "prt_a", "hosted-sale.com", 5_000, true) // commission 750, paid out
	b1 := w.sell(t, "prt_b", "other-partner.com", 12_345, false)
	// 10 % of 123.45 is 12.345 → 1,234 cents (half to even); owes 11,111.
	for _, id := range []string{a1, a2, a3, b1} {
		w.deliver(t, id)
	}
	w.sell(t, "prt_a", "not-delivered.com", 7_000, false) // stays EXTERNALLY_PAID
	w.now = nextDay.Add(time.Hour)
	late := w.sell(t, "prt_a", "delivered-late.com", 9_000, false)
	w.deliver(t, late) // completed after the period's end
	return []string{a1, a2, a3, b1}
}

func ptr[T any](v T) *T { return &v }

// A run settles the period's completed orders once, and the statements
// are the hand-computed figures to the cent.
func TestRunSettlesThePeriodToTheCent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	settled := w.day23(t)
	run, err := w.s.Request(ctx, day, TriggerOps)
	if err != nil || run.Status != models.RunQueued || !run.PeriodEnd.Equal(nextDay) {
		t.Fatalf("request = %+v, %v", run, err)
	}
	var entry models.OutboxEntry
	if err := w.db.Take(&entry, "task_type = ?", tasks.TypeSettlementRun).Error; err != nil || !strings.Contains(string(entry.Payload), run.ID) {
		t.Errorf("the run's task = %+v, %v", entry, err)
	}
	if err := w.s.Run(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	got, err := w.s.Get(ctx, run.ID)
	if err != nil || got.Status != models.RunDone || got.FinishedAt == nil {
		t.Errorf("run after = %+v, %v", got, err)
	}
	w.wantSettledOnce(t, settled)

	statements, next, err := w.s.Statements(ctx, StatementFilter{PeriodStart: &day, Limit: 10})
	if err != nil || next != "" || len(statements) != 2 {
		t.Fatalf("statements = %+v, %q, %v", statements, next, err)
	}
	want := []Statement{
		{PartnerID: "prt_a", Total: Total{Orders: 3, GrossCents: 138_333, RefundsCents: -3_333, CommissionCents: 20_250, AmountOwedCents: 110_500, PayoutCents: 750}},
		{PartnerID: "prt_b", Total: Total{Orders: 1, GrossCents: 12_345, RefundsCents: 0, CommissionCents: 1_234, AmountOwedCents: 11_111, PayoutCents: 0}},
	}
	for i, st := range statements {
		want[i].PeriodStart, want[i].PeriodEnd, want[i].Environment, want[i].Currency, want[i].Status = day, nextDay, models.EnvSandbox, "USD", "final"
		if st != want[i] {
			t.Errorf("statement %d = %+v\nwant          %+v", i, st, want[i])
		}
	}
	if all, err := w.s.PeriodStatements(ctx, day); err != nil || !slices.Equal(all, statements) {
		t.Errorf("the period's statements in one query = %+v, %v; want the page's", all, err)
	}
	page, next, err := w.s.Statements(ctx, StatementFilter{Limit: 1})
	if err != nil || len(page) != 1 || page[0].PartnerID != "prt_a" || next == "" {
		t.Fatalf("first page of one = %+v, %q, %v", page, next, err)
	}
	if page, last, err := w.s.Statements(ctx, StatementFilter{Limit: 1, Cursor: next}); err != nil || len(page) != 1 || page[0].PartnerID != "prt_b" || last != "" {
		t.Errorf("second page = %+v, %q, %v; want prt_b's, the last", page, last, err)
	}
	if _, _, err := w.s.Statements(ctx, StatementFilter{Limit: 1, PartnerID: "prt_a", Cursor: next}); !isCode(err, fault.InvalidCursor) {
		t.Errorf("a cursor of another list = %v, want invalid_cursor", err)
	}
	again, err := w.s.Request(ctx, day, TriggerSchedule)
	if err != nil || again.ID != run.ID || again.Status != models.RunDone {
		t.Errorf("asking again = %+v, %v; want the done run", again, err)
	}
}

// wantSettledOnce fails unless exactly ids are settled, each with one
// order.settled step (its event is written with it).
func (w *world) wantSettledOnce(t *testing.T, ids []string) {
	t.Helper()
	var settled []string
	w.db.Model(&models.Order{}).Where("status = ?", models.OrderSettled).Order("public_id").Pluck("public_id", &settled)
	if len(settled) != len(ids) {
		t.Errorf("settled %v, want %v", settled, ids)
	}
	for _, id := range ids {
		var n int64
		w.db.Model(&models.OrderStep{}).Where("order_id = ? AND event = ? AND actor = ?", id, order.EventSettled, order.ActorSettlement).Count(&n)
		if n != 1 {
			t.Errorf("%s has %d order.settled events, want 1", id, n)
		}
	}
}

// A period that has not closed is a conflict, a time that starts no
// period a validation error naming period_start.
func TestRequestRefusesOpenAndUnalignedPeriods(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	if _, err := w.s.Request(ctx, day, TriggerOps); !isCode(err, fault.Conflict) || !strings.Contains(err.Error(), "has not closed") {
		t.Errorf("the open day = %v, want a conflict", err)
	}
	w.now = nextDay.Add(time.Minute)
	if _, err := w.s.Request(ctx, day.Add(5*time.Hour), TriggerOps); !isCode(err, fault.Validation) || !strings.Contains(err.Error(), "2026-11-23T00:00:00Z") {
		t.Errorf("an unaligned start = %v, want a validation error naming the period's start", err)
	}
	var n int64
	w.db.Model(&models.SettlementRun{}).Count(&n)
	if n != 0 {
		t.Errorf("refused requests made %d runs", n)
	}
}

func isCode(err error, code fault.Code) bool {
	e, ok := fault.As(err)
	return ok && e.Code == code
}

// Two schedulers and a finance click at once: one run, each order settled
// once, the same statements.
func TestThreeRunsAtOnceSettleOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	settled := w.day23(t)
	var wg sync.WaitGroup
	ids := make([]string, 3)
	for i, trigger := range []string{TriggerSchedule, TriggerSchedule, TriggerOps} {
		wg.Go(func() {
			run, err := w.s.Request(ctx, day, trigger)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = run.ID
			if err := w.s.Run(ctx, run.ID); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ids[0] != ids[1] || ids[1] != ids[2] {
		t.Errorf("three requests made runs %v, want one", ids)
	}
	var tasksMade int64
	w.db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypeSettlementRun).Count(&tasksMade)
	if tasksMade != 1 {
		t.Errorf("%d settlement tasks, want 1", tasksMade)
	}
	w.wantSettledOnce(t, settled)
	statements, _, err := w.s.Statements(ctx, StatementFilter{PeriodStart: &day, Limit: 10})
	if err != nil || len(statements) != 2 || statements[0].GrossCents != 138_333 || statements[1].AmountOwedCents != 11_111 {
		t.Errorf("statements = %+v, %v", statements, err)
	}
}

// A partner's transactions are its sales and refunds from the ledger,
// newest first, with totals over the whole filter.
func TestTransactions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.day23(t)
	all := TransactionFilter{PartnerID: "prt_a", Environment: models.EnvSandbox}
	txns, next, totals, err := w.s.Transactions(ctx, all)
	if err != nil || next != "" || len(txns) != 6 {
		t.Fatalf("transactions = %+v, %q, %v", txns, next, err)
	}
	// 1000.00 + 333.33 − 33.33 (refund) + 50.00 (hosted) + 70.00 + 90.00;
	// commission 150.00 + 50.00 − 5.00 + 7.50 + 10.50 + 13.50.
	want := []TransactionTotals{{Currency: "USD", GMVCents: 151_000, CommissionCents: 22_650, Count: 6}}
	if !slices.Equal(totals, want) {
		t.Errorf("totals = %+v, want %+v", totals, want)
	}
	var refund *Transaction
	for i := range txns {
		if txns[i].Kind == "refund" {
			refund = &txns[i]
		}
	}
	if refund == nil || refund.AmountCents != -3_333 || refund.CommissionCents != -500 || refund.Domain != "refunded-part.com" {
		t.Errorf("the refund = %+v", refund)
	}
	hosted := all
	hosted.PaymentModel = models.PaymentHosted
	if txns, _, totals, err := w.s.Transactions(ctx, hosted); err != nil || len(txns) != 1 || txns[0].AmountCents != 5_000 || totals[0].CommissionCents != 750 {
		t.Errorf("hosted = %+v, %+v, %v", txns, totals, err)
	}
	page := all
	page.Limit = 4
	first, next, totals, err := w.s.Transactions(ctx, page)
	if err != nil || len(first) != 4 || next == "" || totals[0].Count != 6 {
		t.Fatalf("first page of 4 = %d, %q, %+v, %v", len(first), next, totals, err)
	}
	page.Cursor = next
	second, last, _, err := w.s.Transactions(ctx, page)
	if err != nil || len(second) != 2 || last != "" || second[0].ID == first[3].ID {
		t.Errorf("second page = %+v, %q, %v", second, last, err)
	}
	hosted.Cursor = next
	if _, _, _, err := w.s.Transactions(ctx, hosted); !isCode(err, fault.InvalidCursor) {
		t.Errorf("a cursor of other filters = %v, want invalid_cursor", err)
	}
	if _, _, _, err := w.s.Transactions(ctx, TransactionFilter{PartnerID: "prt_a", Environment: models.EnvSandbox, PaymentModel: "cash"}); !isCode(err, fault.Validation) {
		t.Errorf("payment_model cash = %v, want a validation error", err)
	}
}

// History looks back over the last periods, newest first: the settled
// one with its run and totals (the statements added up), the ones never
// run without a run or totals, the open period not among them.
func TestHistoryLooksBackOverTheClosedPeriods(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.day23(t)
	run, err := w.s.Request(ctx, day, TriggerOps)
	if err == nil {
		err = w.s.Run(ctx, run.ID)
	}
	if err != nil {
		t.Fatal(err)
	}
	w.now = day.AddDate(0, 0, 3).Add(time.Hour) // 26 November: the 25th closed last
	history, err := w.s.History(ctx)
	if err != nil || len(history) != Periods {
		t.Fatalf("history = %d periods, %v; want %d", len(history), err, Periods)
	}
	for i, h := range history {
		wantStart := day.AddDate(0, 0, 2-i)
		if !h.Start.Equal(wantStart) || !h.End.Equal(wantStart.AddDate(0, 0, 1)) {
			t.Errorf("period %d = %s to %s, want the day from %s", i, h.Start, h.End, wantStart)
		}
		settled := h.Start.Equal(day)
		if (h.Run != nil) != settled || (len(h.Totals) > 0) != settled {
			t.Errorf("period %s: run %+v, totals %+v; want both only for %s", h.Start, h.Run, h.Totals, day)
		}
	}
	got := history[2]
	want := []Total{{Currency: "USD", Orders: 4, GrossCents: 150_678, RefundsCents: -3_333, CommissionCents: 21_484, AmountOwedCents: 121_611, PayoutCents: 750}}
	if got.Run == nil || got.Run.ID != run.ID || !slices.Equal(got.Totals, want) {
		t.Errorf("the settled day = run %+v, totals %+v; want run %s and %+v", got.Run, got.Totals, run.ID, want)
	}
}

// On Postgres a run settles in lanes, each over its share of the orders,
// and three runs at once still settle each order once, with one step and
// one order.settled event each.
func TestLanesSettleEachOrderOnce(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	if !models.IsPostgres(db) {
		t.Skip("lanes split the orders on Postgres; on SQLite a run is one lane (the other tests)")
	}
	ledgertest.CheckAtEnd(t, db)
	r := platformtest.NewRedis(t)
	ob := outbox.New(db, r.Client, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { ob.Close() })
	week := period.Week.Of(day)
	later := func() time.Time { return week.End.Add(time.Hour) }
	key := []byte("test-secret-key-0123456789abcdef")
	orders := order.New(db, ob, key, order.Options{QuoteTTL: time.Minute, ReviewThresholdCents: 1 << 40}, later)
	s := New(db, ob, orders, period.Week, key, later)
	const n = 2_600
	seedCompleted(t, db, week, n, 7)
	ctx := context.Background()

	lanes, err := orders.SplitUnsettled(ctx, week.End, Lanes)
	if err != nil || len(lanes) != Lanes {
		t.Fatalf("lanes = %v, %v; want %d", lanes, err, Lanes)
	}
	for i, r := range lanes {
		if (i == 0) != (r.After == "") || (i == Lanes-1) != (r.Upto == "") || (i > 0 && r.After != lanes[i-1].Upto) {
			t.Errorf("lane %d is %+v: the lanes do not cover the orders end to end", i, r)
		}
		q := db.Model(&models.Order{}).Where("public_id > ?", r.After)
		if r.Upto != "" {
			q = q.Where("public_id <= ?", r.Upto)
		}
		var part int64
		q.Count(&part)
		if part < n/Lanes-1 || part > n/Lanes+1 {
			t.Errorf("lane %d holds %d orders, want about %d", i, part, n/Lanes)
		}
	}

	run, err := s.Request(ctx, week.Start, TriggerOps)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if err := s.Run(ctx, run.ID); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var settled, steps, events, subjects int64
	db.Model(&models.Order{}).Where("status = ? AND settled_period = ?", models.OrderSettled, week.Start).Count(&settled)
	db.Model(&models.OrderStep{}).Where("event = ?", order.EventSettled).Count(&steps)
	db.Model(&models.Event{}).Where("type = ?", order.EventSettled).Count(&events)
	db.Model(&models.WebhookDelivery{}).Joins("JOIN events e ON e.seq = webhook_deliveries.event_seq").
		Where("e.type = ?", order.EventSettled).Distinct("subject").Count(&subjects)
	if settled != n || steps != n || events != n || subjects != n {
		t.Errorf("%d orders settled, %d steps, %d events, deliveries for %d orders; want %d of each", settled, steps, events, subjects, n)
	}
	statements, err := s.PeriodStatements(ctx, week.Start)
	if totals := Totals(statements); err != nil || len(totals) != 1 || totals[0].Orders != n || totals[0].GrossCents != n*benchPrice {
		t.Errorf("totals = %+v, %v; want %d orders, %d cents", totals, err, n, n*benchPrice)
	}
}
