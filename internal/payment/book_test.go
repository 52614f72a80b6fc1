package payment

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

// books is a Book on a fresh database with the sandbox processor, on a
// clock the test moves.
type books struct {
	b       *Book
	db      *gorm.DB
	sandbox *Sandbox
	now     time.Time
}

func newBooks(t *testing.T) *books {
	t.Helper()
	db := modelstest.NewDB(t)
	ob := outbox.New(db, platformtest.NewRedis(t).Client, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { ob.Close() })
	bk := &books{db: db, sandbox: NewSandbox(db, SandboxOptions{}), now: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
	bk.b = NewBook(db, ob, map[string]Provider{models.EnvSandbox: bk.sandbox}, []byte("test-secret-key-0123456789abcdef"),
		slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return bk.now })
	return bk
}

// attempt records a payment of session for amount, as the checkout does
// under the session's lock.
func (bk *books) attempt(t *testing.T, session string, amount int64) (models.Payment, error) {
	t.Helper()
	var p models.Payment
	err := bk.db.Transaction(func(tx *gorm.DB) error {
		var err error
		p, err = Attempt(tx, NewAttempt{Provider: SandboxName, SessionID: session, PartnerID: "prt_a", Environment: models.EnvSandbox,
			Domain: "x.com", AmountCents: amount, Currency: "USD"}, bk.now)
		return err
	})
	return p, err
}

func (bk *books) charge(t *testing.T, p models.Payment, lost bool) string {
	t.Helper()
	s := bk.sandbox
	if lost {
		s = NewSandbox(bk.db, SandboxOptions{LostAnswers: 1})
	}
	id, err := s.Charge(context.Background(), Charge{AmountCents: p.AmountCents, Currency: p.Currency, Card: testCard(TestCardPays), IdempotencyKey: p.IdempotencyKey})
	if lost && errors.Is(err, ErrLostAnswer) {
		id, _, err = bk.sandbox.Lookup(context.Background(), p)
	}
	if err != nil || id == "" {
		t.Fatalf("charge %s: %q, %v", p.ID, id, err)
	}
	return id
}

func (bk *books) payment(t *testing.T, id string) models.Payment {
	t.Helper()
	var p models.Payment
	if err := bk.db.Take(&p, "id = ?", id).Error; err != nil {
		t.Fatal(err)
	}
	return p
}

// A session's attempts share its pending payment (one key, one charge);
// once that payment ends, the next attempt is a new one.
func TestAttemptsShareThePendingPayment(t *testing.T) {
	t.Parallel()
	bk := newBooks(t)
	first, err := bk.attempt(t, "cs_1", 5_000)
	if err != nil || first.Status != models.PaymentPending || first.IdempotencyKey != first.ID {
		t.Fatalf("first attempt = %+v, %v", first, err)
	}
	bk.now = bk.now.Add(time.Minute)
	again, err := bk.attempt(t, "cs_1", 5_000)
	if err != nil || again.ID != first.ID || !again.UpdatedAt.Equal(bk.now) {
		t.Errorf("the attempt again = %+v, %v; want %s touched", again, err, first.ID)
	}
	if _, err := bk.attempt(t, "cs_1", 6_000); !errors.Is(err, ErrPendingElsewhere) {
		t.Errorf("an attempt at another price while one is pending = %v", err)
	}
	if declined, err := Declined(bk.db, first.ID, "Your card was declined.", bk.now); err != nil || !declined {
		t.Fatalf("declining the pending payment = %v, %v", declined, err)
	}
	if declined, err := Declined(bk.db, first.ID, "Declined again.", bk.now); err != nil || declined {
		t.Errorf("declining it again = %v, %v; want nothing done", declined, err)
	}
	if p := bk.payment(t, first.ID); p.Status != models.PaymentFailed || p.Note != "Your card was declined." {
		t.Errorf("the declined payment = %+v", p)
	}
	next, err := bk.attempt(t, "cs_1", 6_000)
	if err != nil || next.ID == first.ID || next.Status != models.PaymentPending {
		t.Errorf("the attempt after a decline = %+v, %v; want a new payment", next, err)
	}
}

// The reconciliation settles payments pending past PendingAfter by asking
// the processor: a charge it took is returned in full, one it did not take
// fails; a payment touched recently is left to its request.
func TestReconcileSettlesPaymentsWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	bk := newBooks(t)
	ctx := context.Background()
	charged, _ := bk.attempt(t, "cs_charged", 5_000)
	chargeID := bk.charge(t, charged, true)
	abandoned, _ := bk.attempt(t, "cs_abandoned", 7_000)
	bk.now = bk.now.Add(PendingAfter + time.Second)
	fresh, _ := bk.attempt(t, "cs_fresh", 9_000)

	n, err := bk.b.Reconcile(ctx, 10)
	if err != nil || n != 2 {
		t.Fatalf("Reconcile = %d, %v; want the two stale payments settled", n, err)
	}
	if p := bk.payment(t, charged.ID); p.Status != models.PaymentSucceeded || p.OrderID != nil || p.ChargeID == nil || *p.ChargeID != chargeID {
		t.Errorf("the charged payment = %+v, want succeeded without an order", p)
	}
	if p := bk.payment(t, abandoned.ID); p.Status != models.PaymentFailed {
		t.Errorf("the abandoned payment = %+v, want failed", p)
	}
	if p := bk.payment(t, fresh.ID); p.Status != models.PaymentPending {
		t.Errorf("the fresh payment = %+v, want it left pending", p)
	}
	var returns int64
	bk.db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypePaymentReturn).Count(&returns)
	if returns != 1 {
		t.Errorf("%d payment:return tasks, want one for the charged payment", returns)
	}
	if n, err := bk.b.Reconcile(ctx, 10); err != nil || n != 0 {
		t.Errorf("Reconcile again = %d, %v; want nothing left", n, err)
	}

	asked := &askedSince{Provider: bk.sandbox}
	bk.b.providers[models.EnvSandbox] = asked
	for i := range 2 { // the task run twice returns once, and says so the second time
		run, foundDone := tasks.TrackFoundDone(ctx)
		if err := bk.b.Return(run, charged.ID); err != nil {
			t.Fatal(err)
		}
		if foundDone() != (i == 1) {
			t.Errorf("run %d found done = %v", i+1, foundDone())
		}
	}
	p := bk.payment(t, charged.ID)
	var c models.SandboxCharge
	bk.db.Take(&c, "id = ?", chargeID)
	var refunds int64
	bk.db.Model(&models.SandboxRefund{}).Where("charge_id = ?", chargeID).Count(&refunds)
	if p.Status != models.PaymentRefunded || p.RefundedCents != 5_000 || p.RefundID == "" || c.RefundedCents != 5_000 || refunds != 1 {
		t.Errorf("after the return: payment %+v, the processor refunded %d in %d refunds", p, c.RefundedCents, refunds)
	}
	if !asked.since.Equal(p.CreatedAt) {
		t.Errorf("the return was asked for as first asked at %v, want the payment's creation %v", asked.since, p.CreatedAt)
	}
}

// askedSince is a provider noting the Since of the refunds asked of it.
type askedSince struct {
	Provider
	since time.Time
}

func (a *askedSince) Refund(ctx context.Context, r Refund) (string, error) {
	a.since = r.Since
	return a.Provider.Refund(ctx, r)
}

// unrecorded charges a payment of session for amount that then paid for
// no order (the name sold meanwhile), as the checkout records it, and
// returns it with its charge.
func (bk *books) unrecorded(t *testing.T, session string, amount int64) (models.Payment, string) {
	t.Helper()
	p, _ := bk.attempt(t, session, amount)
	chargeID := bk.charge(t, p, false)
	if err := bk.b.outbox.Transaction(context.Background(), func(tx *outbox.Tx) error {
		return Unrecorded(tx, p.ID, Charged{ChargeID: chargeID, CardLast4: "4242"}, "the name was sold", bk.now)
	}); err != nil {
		t.Fatal(err)
	}
	return p, chargeID
}

// A return the processor keeps refusing is noted on the payment for ops,
// and given up: neither its task run again nor the rescue (which hands
// back the tasks of payments still ToReturn) gives the charge back after
// ops were told to.
func TestAFailedReturnIsNotedAndGivenUp(t *testing.T) {
	t.Parallel()
	bk := newBooks(t)
	ctx := context.Background()
	p, chargeID := bk.unrecorded(t, "cs_1", 5_000)
	if err := bk.b.FailReturn(ctx, p.ID, errors.New("the processor is down")); err != nil {
		t.Fatal(err)
	}
	got := bk.payment(t, p.ID)
	if got.Status != models.PaymentSucceeded || got.Note != "no order, and giving the charge back failed: pay it back by hand (the processor is down)" ||
		got.ReturnGivenUpAt == nil {
		t.Errorf("the payment after a failed return = %+v", got)
	}
	var toReturn, refunds int64
	bk.db.Model(&models.Payment{}).Where("id = ? AND "+ToReturn, p.ID, ReturnStatuses).Count(&toReturn)
	if err := bk.b.Return(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	bk.db.Model(&models.SandboxRefund{}).Where("charge_id = ?", chargeID).Count(&refunds)
	if toReturn != 0 || refunds != 0 {
		t.Errorf("after the return was given up: still to return %d, refunds made %d by its task run again; want none", toReturn, refunds)
	}
}

// A charge that paid for no order, of which the processor's notice says a
// part came back already (a refund made in its dashboard), is returned in
// what is left, once, and then counts as refunded in full.
func TestAReturnGivesBackWhatIsLeft(t *testing.T) {
	t.Parallel()
	bk := newBooks(t)
	ctx := context.Background()
	p, chargeID := bk.unrecorded(t, "cs_1", 5_000)
	if _, err := bk.sandbox.Refund(ctx, Refund{ChargeID: chargeID, AmountCents: 1_000, Currency: "USD", IdempotencyKey: "dashboard-1"}); err != nil {
		t.Fatal(err)
	}
	if ours, err := ChargeRefunded(bk.db, chargeID, 1_000, bk.now); err != nil || !ours {
		t.Fatalf("the processor's notice of 1000 refunded = %v, %v", ours, err)
	}
	if got := bk.payment(t, p.ID); got.Status != models.PaymentPartiallyRefunded {
		t.Fatalf("the payment after the notice = %+v, want partially refunded", got)
	}
	for range 2 { // run again, it gives back nothing more
		if err := bk.b.Return(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
	}
	got := bk.payment(t, p.ID)
	var c models.SandboxCharge
	bk.db.Take(&c, "id = ?", chargeID)
	var refunds int64
	bk.db.Model(&models.SandboxRefund{}).Where("charge_id = ?", chargeID).Count(&refunds)
	if got.Status != models.PaymentRefunded || got.RefundedCents != 5_000 || c.RefundedCents != 5_000 || refunds != 2 {
		t.Errorf("after the return: payment %+v; the processor refunded %d in %d refunds, want 5000 in 2", got, c.RefundedCents, refunds)
	}
}

// A return given up for ops leaves the payments awaiting ops once ops
// record that they paid it back by hand, or once the processor's notice
// says it was refunded in full (in its dashboard, say). Recording it
// again with the same reference changes nothing; another reference, a
// payment whose return was not given up or was refunded since, an
// unknown one or a bad reference is refused and changes nothing.
func TestAGivenUpReturnIsPaidBackByHandOnce(t *testing.T) {
	t.Parallel()
	bk := newBooks(t)
	ctx := context.Background()
	givenUp, _ := bk.unrecorded(t, "cs_1", 5_000)
	returning, _ := bk.unrecorded(t, "cs_2", 6_000)
	dashboard, charge := bk.unrecorded(t, "cs_3", 7_000)
	for _, p := range []models.Payment{givenUp, dashboard} {
		if err := bk.b.FailReturn(ctx, p.ID, errors.New("the processor is down")); err != nil {
			t.Fatal(err)
		}
	}
	awaiting := func() []string {
		var ids []string
		bk.db.Model(&models.Payment{}).Where(ReturnsAwaitingOps, ReturnStatuses).Order("id").Pluck("id", &ids)
		return ids
	}
	if got := awaiting(); len(got) != 2 {
		t.Fatalf("payments awaiting ops = %v, want the two given up", got)
	}
	if _, err := ChargeRefunded(bk.db, charge, 7_000, bk.now); err != nil {
		t.Fatal(err)
	}
	if got := awaiting(); len(got) != 1 || got[0] != givenUp.ID {
		t.Fatalf("payments awaiting ops after one was refunded in the processor's dashboard = %v, want %s", got, givenUp.ID)
	}

	for _, bad := range []struct {
		id, reference string
		code          fault.Code
	}{
		{givenUp.ID, "", fault.Validation},
		{givenUp.ID, "wire\t7", fault.Validation},
		{returning.ID, "wire-7", fault.Conflict},
		{dashboard.ID, "wire-7", fault.Conflict},
		{"pay_nope", "wire-7", fault.NotFound},
	} {
		if _, err := bk.b.PaidBackByHand(ctx, bad.id, bad.reference); !isFault(err, bad.code) {
			t.Errorf("payment %s paid back by hand with %q: %v, want %s", bad.id, bad.reference, err, bad.code)
		}
	}
	if got := awaiting(); len(got) != 1 {
		t.Errorf("after refused moves, payments awaiting ops = %v", got)
	}

	note := "no order, and giving the charge back failed: pay it back by hand (the processor is down); paid back by hand (wire-7)"
	for range 2 {
		v, err := bk.b.PaidBackByHand(ctx, givenUp.ID, " wire-7 ")
		if err != nil {
			t.Fatal(err)
		}
		if v.Note != note || v.PaidByHandAt == nil || v.PaidByHandReference != "wire-7" {
			t.Errorf("the payment paid back by hand = %+v, want note %q", v, note)
		}
	}
	if got := awaiting(); len(got) != 0 {
		t.Errorf("payments awaiting ops after one was paid back by hand = %v", got)
	}
	if _, err := bk.b.PaidBackByHand(ctx, givenUp.ID, "wire-8"); !isFault(err, fault.Conflict) {
		t.Errorf("paid back by hand again with another reference: %v, want a conflict", err)
	}

	// The processor refunds it too (a refund in its dashboard): the note
	// says the buyer was paid twice, once however often the notice comes.
	p := bk.payment(t, givenUp.ID)
	for range 2 {
		if _, err := ChargeRefunded(bk.db, *p.ChargeID, 5_000, bk.now); err != nil {
			t.Fatal(err)
		}
	}
	if got := bk.payment(t, givenUp.ID); got.Note != note+PaidTwiceNote || got.Status != models.PaymentRefunded {
		t.Errorf("refunded by the processor after it was paid by hand: %s, note %q", got.Status, got.Note)
	}
}

// isFault says err is a fault of code.
func isFault(err error, code fault.Code) bool {
	e, ok := fault.As(err)
	return ok && e.Code == code
}
