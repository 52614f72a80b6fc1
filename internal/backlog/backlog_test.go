package backlog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// rows writes what the backlog is read from.
type rows struct {
	t  *testing.T
	db *gorm.DB
}

func (r rows) create(v any) {
	r.t.Helper()
	if err := r.db.Create(v).Error; err != nil {
		r.t.Fatal(err)
	}
}

// order writes a hosted order of id in status, with a push for each of
// pushes: the events recorded for it after its start-transfer step.
func (r rows) order(id, status string, pushes ...[]string) {
	r.t.Helper()
	r.create(&models.Order{PublicID: id, PartnerID: "prt_a", Environment: models.EnvLive, ListingID: id, Domain: id + ".com",
		Status: status, Review: models.ReviewNone, SalePriceCents: 10_000, Currency: "USD", PaymentModel: models.PaymentHosted,
		BuyerEmail: "b@example.com", BuyerName: "B", BuyerCountry: "NL", ExternalPaymentRef: "ch", CreatedAt: t0, UpdatedAt: t0})
	at := t0
	for _, ends := range pushes {
		at = at.Add(time.Minute)
		start := models.OrderStep{OrderID: id, At: at, Actor: order.ActorOps, Status: status, Event: order.EventTransferStart}
		r.create(&start)
		for _, event := range ends {
			at = at.Add(time.Minute)
			r.create(&models.OrderStep{OrderID: id, At: at, Actor: order.ActorRegistry, Status: status, Event: event,
				Note: fmt.Sprintf("push %d: %s", start.ID, event), PushID: &start.ID})
		}
	}
}

// refund writes a refund of orderID of amount whose card refund is in
// status, paid by hand or not.
func (r rows) refund(id, orderID, status string, amount int64, byHand bool) {
	r.t.Helper()
	rf := models.Refund{ID: id, OrderID: orderID, AmountCents: amount, Currency: "USD", Reason: "r", Actor: "partner",
		CardStatus: status, CardError: "card expired", CreatedAt: t0.Add(time.Duration(amount) * time.Second)}
	if byHand {
		rf.PaidByHandAt, rf.PaidByHandReference = &t0, "wire"
	}
	r.create(&rf)
}

// payment writes a charge of amount that paid for no order, refunded
// by refunded, whose return was given up at givenUp (nil: not), paid
// by hand or not.
func (r rows) payment(id, status string, amount, refunded int64, givenUp *time.Time, byHand bool) {
	r.t.Helper()
	charge := "ch_" + id
	p := models.Payment{ID: id, Provider: "sandbox", SessionID: "cs_" + id, PartnerID: "prt_a", Environment: models.EnvLive,
		Domain: id + ".com", IdempotencyKey: id, AmountCents: amount, RefundedCents: refunded, Currency: "USD", Status: status,
		ChargeID: &charge, Note: "note of " + id, ReturnGivenUpAt: givenUp, CreatedAt: t0, UpdatedAt: t0}
	if byHand {
		p.PaidByHandAt, p.PaidByHandReference = &t0, "wire"
	}
	r.create(&p)
}

// The backlog is each kind's work that waits, and nothing else: a push
// ops failed, an older push's unconfirmed end, a delivered order, a card
// refund sent, pending or paid by hand, a charge refunded in full, paid
// by hand or whose return was not given up are not in it.
func TestTheBacklogIsWhatWaitsForOps(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	r := rows{t, db}
	unconfirmed := []string{order.EventTransferRequested, order.EventTransferUnconfirmed}
	r.order("ord_waits", models.OrderTransferInProgress, unconfirmed)
	r.order("ord_failed_by_ops", models.OrderTransferInProgress, append(unconfirmed, order.EventTransferFailed))
	r.order("ord_pushed_again", models.OrderTransferInProgress, unconfirmed, []string{order.EventTransferFailed}, []string{order.EventTransferRequested})
	r.order("ord_delivered", models.OrderTransferCompleted, unconfirmed)
	r.order("ord_plain", models.OrderTransferInProgress, []string{order.EventTransferRequested})

	r.refund("rf_failed", "ord_plain", models.CardRefundFailed, 3_000, false)
	r.refund("rf_failed_earlier", "ord_delivered", models.CardRefundFailed, 2_000, false)
	r.refund("rf_by_hand", "ord_plain", models.CardRefundFailed, 4_000, true)
	r.refund("rf_sent", "ord_plain", models.CardRefundSent, 5_000, false)
	r.refund("rf_pending", "ord_plain", models.CardRefundPending, 6_000, false)

	// ord_plain's charge: the processor counts 8,000 refunded, of which
	// its refunds sent explain 5,000 (rf_sent).
	r.payment("pay_plain", models.PaymentPartiallyRefunded, 20_000, 8_000, nil, false)
	db.Model(&models.Payment{}).Where("id = ?", "pay_plain").Update("order_id", "ord_plain")

	early, late := t0.Add(time.Hour), t0.Add(2*time.Hour)
	r.payment("pay_given_up", models.PaymentSucceeded, 9_000, 0, &late, false)
	r.payment("pay_part", models.PaymentPartiallyRefunded, 8_000, 1_500, &early, false)
	r.payment("pay_refunded", models.PaymentRefunded, 7_000, 7_000, &early, false)
	r.payment("pay_by_hand", models.PaymentSucceeded, 6_000, 0, &early, true)
	r.payment("pay_returning", models.PaymentSucceeded, 5_000, 0, nil, false)

	s := New(db)
	ctx := context.Background()
	counts, err := s.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[Kind]int64{TransferUnconfirmed: 1, CardRefundFailed: 2, ReturnGivenUp: 2}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("counts = %v, want %v", counts, want)
	}

	items, err := s.List(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, fmt.Sprintf("%s %s %s %s %d %s %s %q %d", it.Kind, it.ID, it.OrderID, it.Domain, it.AmountCents, it.Currency,
			it.Since.Format(time.TimeOnly), it.Reason, it.UnmatchedRefundCents))
	}
	var push int64
	db.Model(&models.OrderStep{}).Where("order_id = ? AND event = ?", "ord_waits", order.EventTransferStart).Pluck("id", &push)
	wantItems := []string{
		fmt.Sprintf("transfer_unconfirmed ord_waits ord_waits ord_waits.com 0 USD 09:03:00 \"push %d: transfer.unconfirmed\" 0", push),
		`card_refund_failed rf_failed_earlier ord_delivered ord_delivered.com 2000 USD 09:33:20 "card expired" 0`,
		`card_refund_failed rf_failed ord_plain ord_plain.com 3000 USD 09:50:00 "card expired" 3000`,
		`return_given_up pay_part  pay_part.com 6500 USD 10:00:00 "note of pay_part" 0`,
		`return_given_up pay_given_up  pay_given_up.com 9000 USD 11:00:00 "note of pay_given_up" 0`,
	}
	if fmt.Sprint(got) != fmt.Sprint(wantItems) {
		t.Errorf("items:\n%s\nwant:\n%s", got, wantItems)
	}

	if items, err := s.List(ctx, 1); err != nil || len(items) != 3 {
		t.Errorf("a list of one of each kind = %d items, %v; want 3", len(items), err)
	}
}

// Every query of the backlog, from a plan made once for any values (a
// scrape's prepared statement), reads the work waiting and not every
// order, step, refund or payment: 3,000 settled orders, each delivered
// by a push, with a sent refund and its charge, are not read.
func TestTheBacklogReadsOnlyWhatWaits(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	if !models.IsPostgres(db) {
		t.Skip("the plans are Postgres's")
	}
	r := rows{t, db}
	var orders []models.Order
	var refunds []models.Refund
	var payments []models.Payment
	for i := range 3000 {
		id := fmt.Sprintf("ord_%04d", i)
		orders = append(orders, models.Order{PublicID: id, PartnerID: "prt_a", Environment: models.EnvLive, ListingID: id, Domain: id + ".com",
			Status: models.OrderSettled, Review: models.ReviewNone, SalePriceCents: 10_000, Currency: "USD", PaymentModel: models.PaymentHosted,
			BuyerEmail: "b@example.com", BuyerName: "B", BuyerCountry: "NL", ExternalPaymentRef: "ch", CreatedAt: t0, UpdatedAt: t0})
		refunds = append(refunds, models.Refund{ID: "rf_" + id, OrderID: id, AmountCents: 100, Currency: "USD", Reason: "r", Actor: "partner",
			CardStatus: models.CardRefundSent, CreatedAt: t0})
		charge := "ch_" + id
		payments = append(payments, models.Payment{ID: "pay_" + id, Provider: "sandbox", SessionID: "cs_" + id, PartnerID: "prt_a",
			Environment: models.EnvLive, Domain: id + ".com", IdempotencyKey: "pay_" + id, AmountCents: 10_000, RefundedCents: 100,
			Currency: "USD", Status: models.PaymentPartiallyRefunded, ChargeID: &charge, OrderID: &orders[i].PublicID, CreatedAt: t0, UpdatedAt: t0})
	}
	for _, batch := range []any{orders, refunds, payments} {
		if err := db.CreateInBatches(batch, 1000).Error; err != nil {
			t.Fatal(err)
		}
	}
	// Each was delivered by a push: its start-transfer step (whose id
	// the push is), then transfer.requested and transfer.completed.
	var starts []models.OrderStep
	for _, o := range orders {
		starts = append(starts, models.OrderStep{OrderID: o.PublicID, At: t0, Actor: order.ActorOps, Status: models.OrderTransferInProgress,
			Event: order.EventTransferStart})
	}
	if err := db.CreateInBatches(starts, 1000).Error; err != nil {
		t.Fatal(err)
	}
	var ends []models.OrderStep
	for _, st := range starts {
		for _, event := range []string{order.EventTransferRequested, order.EventTransferCompleted} {
			ends = append(ends, models.OrderStep{OrderID: st.OrderID, At: t0, Actor: order.ActorRegistry, Status: models.OrderTransferInProgress,
				Event: event, PushID: &st.ID})
		}
	}
	if err := db.CreateInBatches(ends, 1000).Error; err != nil {
		t.Fatal(err)
	}
	r.order("ord_waits", models.OrderTransferInProgress, []string{order.EventTransferRequested, order.EventTransferUnconfirmed})
	r.refund("rf_failed", "ord_0001", models.CardRefundFailed, 3_000, false)
	r.payment("pay_given_up", models.PaymentSucceeded, 9_000, 0, &t0, false)
	if err := db.Exec("ANALYZE orders, order_steps, refunds, payments").Error; err != nil {
		t.Fatal(err)
	}

	statements := modelstest.CaptureStatements(t, db, "SELECT")
	s := New(db)
	if _, err := s.Counts(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
	if n := len(statements()); n != 2*len(Kinds) {
		t.Fatalf("%d statements, want a count and a list of each kind", n)
	}
	for _, st := range statements() {
		root, plan := modelstest.ExplainGeneric(t, db, st)
		if read := root.RowsRead(); read > 50 {
			t.Errorf("%s\nread %v rows from a plan for any values; want the few waiting\n%s", st.SQL, read, plan)
		}
	}
}
