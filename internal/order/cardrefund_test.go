package order

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// countingProvider is the sandbox provider counting its refunds, or
// failing them while fail is set; since is the last one's Since.
type countingProvider struct {
	*payment.Sandbox
	refunds atomic.Int32
	fail    atomic.Bool
	since   atomic.Value
}

func (p *countingProvider) Refund(ctx context.Context, r payment.Refund) (string, error) {
	p.since.Store(r.Since)
	if p.fail.Load() {
		return "", errors.New("the processor is down")
	}
	p.refunds.Add(1)
	return p.Sandbox.Refund(ctx, r)
}

// hostedOrder lists domain at price and records its sale to prt_a, paid
// on the checkout's page.
func (w *world) hostedOrder(t *testing.T, domain string, price int64) View {
	t.Helper()
	w.list(t, domain, price)
	v, err := w.s.RecordHosted(context.Background(), w.reserved(t, w.session(t, "prt_a", domain), price))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A hosted order's refund goes back to the buyer's card once, through its
// payment:refund task, however often the task runs; one the provider
// keeps refusing is marked failed in the order's timeline for ops. A
// partner-collected order's refund has no card to go back to.
func TestHostedRefundsGoBackToTheCardOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	v := w.hostedOrder(t, "refundme.com", 50_000)
	first, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: v.PublicID, Reason: "changed mind", AmountCents: new(int64(20_000))})
	if err != nil {
		t.Fatal(err)
	}
	second, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: v.PublicID, Reason: "the rest"})
	if err != nil {
		t.Fatal(err)
	}
	var queued int64
	w.db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypePaymentRefund).Count(&queued)
	if queued != 2 {
		t.Errorf("%d payment:refund tasks, want one per refund", queued)
	}

	p := &countingProvider{Sandbox: payment.NewSandbox(w.db, payment.SandboxOptions{})}
	providers := map[string]payment.Provider{models.EnvSandbox: p}
	for i := range 2 { // a retried task refunds once, and says it found the refund sent
		run, foundDone := tasks.TrackFoundDone(ctx)
		if err := w.s.ReturnToCard(run, providers, first.ID); err != nil {
			t.Fatal(err)
		}
		if foundDone() != (i == 1) {
			t.Errorf("run %d found done = %v", i+1, foundDone())
		}
	}
	var rf models.Refund
	w.db.Take(&rf, "id = ?", first.ID)
	if p.refunds.Load() != 1 || rf.CardStatus != models.CardRefundSent || !strings.HasPrefix(rf.CardRefundID, "re_test_") {
		t.Errorf("after two runs: %d provider refunds, refund %+v", p.refunds.Load(), rf)
	}
	if since, _ := p.since.Load().(time.Time); !since.Equal(rf.CreatedAt) {
		t.Errorf("the refund was asked for as first asked at %v, want its creation %v (a provider that forgets keys looks for it after a while)", since, rf.CreatedAt)
	}
	var pay models.Payment
	w.db.Take(&pay, "order_id = ?", v.PublicID)
	if pay.Status != models.PaymentPartiallyRefunded || pay.RefundedCents != 20_000 || pay.RefundID != rf.CardRefundID {
		t.Errorf("the order's payment after a card refund of 20000 = %+v", pay)
	}

	p.fail.Store(true)
	if err := w.s.ReturnToCard(ctx, providers, second.ID); err == nil {
		t.Fatal("a provider that is down: no error")
	}
	if err := w.s.FailCardRefund(ctx, second.ID, errors.New("the processor is down")); err != nil {
		t.Fatal(err)
	}
	p.fail.Store(false)
	if err := w.s.ReturnToCard(ctx, providers, second.ID); err != nil || p.refunds.Load() != 1 {
		t.Errorf("a failed card refund ran again: %v, %d provider refunds; want it left to ops", err, p.refunds.Load())
	}
	rf = models.Refund{}
	w.db.Take(&rf, "id = ?", second.ID)
	if rf.CardStatus != models.CardRefundFailed || !strings.Contains(rf.CardError, "processor is down") {
		t.Errorf("the failed refund = %+v", rf)
	}
	view, err := w.s.Ops(ctx, v.PublicID)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, st := range view.Timeline {
		if st.Actor == ActorPayment {
			notes = append(notes, st.Note)
		}
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "given back to the buyer's card (re_test_") || !strings.Contains(notes[1], "pay it back by hand") {
		t.Errorf("the payment steps = %q", notes)
	}

	w.list(t, "collected.com", 10_000)
	o, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, NewOrder{Domain: "collected.com", ExpectedPrice: new(int64(10_000)), Currency: "USD",
		ExternalPaymentRef: "pay_1", Buyer: &Buyer{Email: "b@example.com", Name: "B", Country: "NL"}})
	if err != nil {
		t.Fatal(err)
	}
	collected, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: o.PublicID, Reason: "partner refunds it"})
	if err != nil {
		t.Fatal(err)
	}
	rf = models.Refund{}
	w.db.Take(&rf, "id = ?", collected.ID)
	w.db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypePaymentRefund).Count(&queued)
	if rf.CardStatus != "" || queued != 2 {
		t.Errorf("a partner-collected refund: card status %q, %d refund tasks; want none", rf.CardStatus, queued)
	}
}

// A card refund the processor's notice reported before its task recorded
// it (the task failed after the provider's refund, and ran again) is
// counted once on the payment; the payment is refunded in full only when
// the refunds add up to the charge, and a late notice lowers nothing.
func TestACardRefundTheProcessorReportedFirstCountsOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	v := w.hostedOrder(t, "noticed.com", 50_000)
	providers := map[string]payment.Provider{models.EnvSandbox: payment.NewSandbox(w.db, payment.SandboxOptions{})}
	var pay models.Payment
	w.db.Take(&pay, "order_id = ?", v.PublicID)
	counts := func(step string, cents int64, status string) {
		t.Helper()
		var p models.Payment
		w.db.Take(&p, "order_id = ?", v.PublicID)
		if p.RefundedCents != cents || p.Status != status {
			t.Errorf("%s: the payment counts %d cents refunded, %s; want %d, %s", step, p.RefundedCents, p.Status, cents, status)
		}
	}

	part, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: v.PublicID, Reason: "part", AmountCents: new(int64(20_000))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := paymentNotice(w, *pay.ChargeID, 20_000); err != nil {
		t.Fatal(err)
	}
	if err := w.s.ReturnToCard(ctx, providers, part.ID); err != nil {
		t.Fatal(err)
	}
	counts("the notice first, then the task", 20_000, models.PaymentPartiallyRefunded)

	rest, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: v.PublicID, Reason: "the rest"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.s.ReturnToCard(ctx, providers, rest.ID); err != nil {
		t.Fatal(err)
	}
	counts("the rest, its task first", 50_000, models.PaymentRefunded)
	if _, err := paymentNotice(w, *pay.ChargeID, 20_000); err != nil {
		t.Fatal(err)
	}
	counts("a late notice of the first refund", 50_000, models.PaymentRefunded)
}

// paymentNotice records the processor's notice that refunded cents of
// charge went back to the card.
func paymentNotice(w *world, charge string, refunded int64) (bool, error) {
	return payment.ChargeRefunded(w.db, charge, refunded, time.Now().UTC())
}

// A card refund the processor made and whose record failed says so
// (payment.ErrNotRecorded, which the worker never gives up as a refund to
// pay by hand), stays pending, and its next run records the same refund.
func TestACardRefundMadeButNotRecordedIsRecordedByItsRetry(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	v := w.hostedOrder(t, "unrecorded.com", 30_000)
	rf, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: v.PublicID, Reason: "changed mind"})
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProvider{Sandbox: payment.NewSandbox(w.db, payment.SandboxOptions{})}
	providers := map[string]payment.Provider{models.EnvSandbox: p}
	if err := w.db.Exec("ALTER TABLE order_steps RENAME TO order_steps_away").Error; err != nil { // the record's last write fails
		t.Fatal(err)
	}
	err = w.s.ReturnToCard(ctx, providers, rf.ID)
	if !errors.Is(err, payment.ErrNotRecorded) || p.refunds.Load() != 1 {
		t.Fatalf("a refund made and not recorded = %v after %d provider refunds, want ErrNotRecorded after one", err, p.refunds.Load())
	}
	var left models.Refund
	w.db.Take(&left, "id = ?", rf.ID)
	if left.CardStatus != models.CardRefundPending {
		t.Errorf("the refund is %q, want still pending", left.CardStatus)
	}
	if err := w.db.Exec("ALTER TABLE order_steps_away RENAME TO order_steps").Error; err != nil {
		t.Fatal(err)
	}
	if err := w.s.ReturnToCard(ctx, providers, rf.ID); err != nil {
		t.Fatal(err)
	}
	var done models.Refund
	w.db.Take(&done, "id = ?", rf.ID)
	var charges int64
	w.db.Model(&models.SandboxRefund{}).Count(&charges)
	if done.CardStatus != models.CardRefundSent || charges != 1 {
		t.Errorf("after the retry: refund %q, %d refunds at the processor; want sent, one", done.CardStatus, charges)
	}
}

// Card refunds of the same orders returned at once, by as many workers
// as there are refunds, leave each order's payment counting what its
// refunds sent to the card, refunded in full exactly when they add up to
// the charge: a refund's record waits for another of its order's to
// commit, and counts it.
func TestCardRefundsReturnedAtOnceAllCount(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	providers := map[string]payment.Provider{models.EnvSandbox: payment.NewSandbox(w.db, payment.SandboxOptions{})}
	seed := uint64(time.Now().UnixNano())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d", seed)
		}
	})
	rng := rand.New(rand.NewPCG(seed, 31))
	const orders, price = 12, 60_000
	var refunds []string
	for i := range orders {
		v := w.hostedOrder(t, fmt.Sprintf("together%02d.com", i), price)
		parts := 2 + rng.IntN(3)
		for j := range parts {
			in := NewRefund{OrderID: v.PublicID, Reason: "part"}
			if j < parts-1 || rng.IntN(2) == 0 { // the last part takes the rest, or leaves some
				in.AmountCents = new(int64(1_000 + rng.Int64N(price/int64(parts)-1_000)))
			}
			rf, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, in)
			if err != nil {
				t.Fatal(err)
			}
			refunds = append(refunds, rf.ID)
		}
	}
	rng.Shuffle(len(refunds), func(i, j int) { refunds[i], refunds[j] = refunds[j], refunds[i] })
	var wg sync.WaitGroup
	for _, id := range refunds {
		wg.Go(func() {
			if err := w.s.ReturnToCard(ctx, providers, id); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()

	var pays []models.Payment
	if err := w.db.Where("order_id IS NOT NULL").Find(&pays).Error; err != nil {
		t.Fatal(err)
	}
	for _, p := range pays {
		var sent int64
		w.db.Model(&models.Refund{}).Where("order_id = ? AND card_status = ?", *p.OrderID, models.CardRefundSent).
			Select("COALESCE(SUM(amount_cents), 0)").Scan(&sent)
		want := models.PaymentPartiallyRefunded
		if sent == p.AmountCents {
			want = models.PaymentRefunded
		}
		if p.RefundedCents != sent || p.Status != want {
			t.Errorf("order %s: %d cents went back to the card, the payment counts %d, %s; want %s", *p.OrderID, sent, p.RefundedCents, p.Status, want)
		}
	}
	if len(pays) != orders {
		t.Errorf("%d payments of orders, want %d", len(pays), orders)
	}
}

// A card refund that failed is paid back by hand once ops record how:
// the refund keeps the reference, the timeline says so, and it leaves
// the refunds awaiting ops. Recording it again with the same reference
// changes nothing; another reference, a refund whose card refund did
// not fail, an unknown one or a bad reference is refused and changes
// nothing.
func TestAFailedCardRefundIsPaidByHandOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	v := w.hostedOrder(t, "byhand.com", 30_000)
	failed, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: v.PublicID, Reason: "part", AmountCents: new(int64(10_000))})
	if err != nil {
		t.Fatal(err)
	}
	pending, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: v.PublicID, Reason: "more", AmountCents: new(int64(5_000))})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.s.FailCardRefund(ctx, failed.ID, errors.New("card expired")); err != nil {
		t.Fatal(err)
	}
	awaiting := func() []string {
		var ids []string
		w.db.Model(&models.Refund{}).Where(RefundsAwaitingOps).Order("id").Pluck("id", &ids)
		return ids
	}
	if got := awaiting(); len(got) != 1 || got[0] != failed.ID {
		t.Fatalf("refunds awaiting ops = %v, want the failed one %s", got, failed.ID)
	}

	for _, bad := range []struct {
		id, reference string
		code          fault.Code
	}{
		{failed.ID, "  ", fault.Validation},
		{failed.ID, "SEPA\n42", fault.Validation},
		{failed.ID, strings.Repeat("x", models.MaxReference+1), fault.Validation},
		{pending.ID, "SEPA-1", fault.Conflict},
		{"rf_nope", "SEPA-1", fault.NotFound},
	} {
		_, err := w.s.RefundPaidByHand(ctx, bad.id, bad.reference)
		wantCode(t, fmt.Sprintf("refund %s paid by hand with %q", bad.id, bad.reference), err, bad.code)
	}
	if got := awaiting(); len(got) != 1 {
		t.Errorf("after refused moves, refunds awaiting ops = %v", got)
	}

	for range 2 {
		view, err := w.s.RefundPaidByHand(ctx, failed.ID, " SEPA-1 ")
		if err != nil {
			t.Fatal(err)
		}
		var byHand []string
		for _, st := range view.Timeline {
			if st.Actor == ActorOps {
				byHand = append(byHand, st.Note)
			}
		}
		want := fmt.Sprintf("refund %s: 10000 cents paid back to the buyer by hand (SEPA-1)", failed.ID)
		if len(byHand) != 1 || byHand[0] != want {
			t.Errorf("ops steps = %q, want one: %q", byHand, want)
		}
	}
	var rf models.Refund
	w.db.Take(&rf, "id = ?", failed.ID)
	if rf.PaidByHandAt == nil || rf.PaidByHandReference != "SEPA-1" || rf.CardStatus != models.CardRefundFailed {
		t.Errorf("the refund paid by hand = %+v", rf)
	}
	if got := awaiting(); len(got) != 0 {
		t.Errorf("refunds awaiting ops after one was paid by hand = %v", got)
	}
	_, err = w.s.RefundPaidByHand(ctx, failed.ID, "SEPA-2")
	wantCode(t, "paid by hand again with another reference", err, fault.Conflict)
}

// lostRefundAnswer is the sandbox provider whose refunds are made but
// whose answers are lost while lose is set.
type lostRefundAnswer struct {
	*payment.Sandbox
	lose atomic.Bool
}

func (p *lostRefundAnswer) Refund(ctx context.Context, r payment.Refund) (string, error) {
	id, err := p.Sandbox.Refund(ctx, r)
	if err == nil && p.lose.Load() {
		return "", errors.New("the processor did not answer")
	}
	return id, err
}

// A card refund given up for ops (its answer lost every time, though the
// processor made it) is retried from the ops move: its new task asks
// under the refund's key, finds the refund made, and records it sent, so
// the buyer is paid once and nothing waits for ops. A refund not failed,
// or paid back by hand, is not retried.
func TestAFailedCardRefundIsRetriedUnderItsKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	v := w.hostedOrder(t, "retried.com", 30_000)
	rf, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: v.PublicID, Reason: "part", AmountCents: new(int64(10_000))})
	if err != nil {
		t.Fatal(err)
	}
	p := &lostRefundAnswer{Sandbox: payment.NewSandbox(w.db, payment.SandboxOptions{})}
	p.lose.Store(true)
	providers := map[string]payment.Provider{models.EnvSandbox: p}
	if err := w.s.ReturnToCard(ctx, providers, rf.ID); err == nil {
		t.Fatal("a lost answer: no error")
	}
	if err := w.s.FailCardRefund(ctx, rf.ID, errors.New("the processor did not answer")); err != nil {
		t.Fatal(err)
	}
	tasksOf := func() int64 {
		var n int64
		w.db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypePaymentRefund).Count(&n) // the order's one refund's
		return n
	}
	before := tasksOf()

	view, err := w.s.RetryCardRefund(ctx, rf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if last := view.Timeline[len(view.Timeline)-1]; last.Actor != ActorOps || last.Note != fmt.Sprintf("refund %s: giving 10000 cents back to the buyer's card asked again", rf.ID) {
		t.Errorf("the retry's step = %+v", last)
	}
	var got models.Refund
	w.db.Take(&got, "id = ?", rf.ID)
	if got.CardStatus != models.CardRefundPending || got.CardError != "" || tasksOf() != before+1 {
		t.Errorf("after the retry: refund %+v, %d payment:refund tasks (was %d); want it pending with a new task", got, tasksOf(), before)
	}
	_, err = w.s.RetryCardRefund(ctx, rf.ID)
	wantCode(t, "a retry of a refund pending again", err, fault.Conflict)
	_, err = w.s.RefundPaidByHand(ctx, rf.ID, "SEPA-1")
	wantCode(t, "paid by hand while it is retried", err, fault.Conflict)

	p.lose.Store(false)
	if err := w.s.ReturnToCard(ctx, providers, rf.ID); err != nil {
		t.Fatal(err)
	}
	w.db.Take(&got, "id = ?", rf.ID)
	var made int64
	w.db.Model(&models.SandboxRefund{}).Where("amount_cents = ?", 10_000).Count(&made)
	var waiting int64
	w.db.Model(&models.Refund{}).Where(RefundsAwaitingOps).Count(&waiting)
	if got.CardStatus != models.CardRefundSent || made != 1 || waiting != 0 {
		t.Errorf("after the retried task: refund %+v, %d refunds the processor made, %d waiting for ops; want it sent once", got, made, waiting)
	}

	other, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: v.PublicID, Reason: "more", AmountCents: new(int64(5_000))})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.s.FailCardRefund(ctx, other.ID, errors.New("card expired")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.s.RefundPaidByHand(ctx, other.ID, "SEPA-2"); err != nil {
		t.Fatal(err)
	}
	_, err = w.s.RetryCardRefund(ctx, other.ID)
	wantCode(t, "a retry of a refund paid by hand", err, fault.Conflict)
	_, err = w.s.RetryCardRefund(ctx, "rf_none")
	wantCode(t, "a retry of an unknown refund", err, fault.NotFound)
}
