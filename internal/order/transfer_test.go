package order

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/registry/sandbox"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// flakyPusher fails the first pushes as a registry that is down would,
// and counts the pushes per change id.
type flakyPusher struct {
	registry.Provider
	down   int
	pushes map[string]int
}

func (f *flakyPusher) PushDomain(ctx context.Context, name, recipient, change string) error {
	f.pushes[change]++
	if f.down > 0 {
		f.down--
		return fmt.Errorf("registry answered 503: %w", registry.ErrTransient)
	}
	return f.Provider.PushDomain(ctx, name, recipient, change)
}

// startedTransfer records an order, starts its transfer to recipient and
// returns the push task's payload as the outbox holds it.
func startedTransfer(t *testing.T, w *world, domain, recipient string) tasks.TransferPushPayload {
	t.Helper()
	ctx := context.Background()
	w.list(t, domain, 10_000)
	o, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder(domain, 10_000, ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.s.Move(ctx, o.PublicID, StartTransfer, MoveInput{Recipient: recipient}); err != nil {
		t.Fatal(err)
	}
	var entries []models.OutboxEntry
	w.db.Where("task_type = ?", tasks.TypeTransferPush).Order("created_at").Find(&entries)
	for _, e := range entries {
		var p tasks.TransferPushPayload
		if err := json.Unmarshal(e.Payload, &p); err == nil && p.OrderID == o.PublicID {
			return p
		}
	}
	t.Fatalf("no transfer:push task for %s in the outbox", o.PublicID)
	return tasks.TransferPushPayload{}
}

func TestPushRetriesThenCompletes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	p := startedTransfer(t, w, "pushme.com", "buyer-registrar")
	reg := &flakyPusher{Provider: sandbox.New(w.db, 0), down: 2, pushes: map[string]int{}}
	for attempt := range 2 {
		if err := w.s.Push(ctx, p, reg, false); err == nil {
			t.Fatalf("attempt %d with the registry down succeeded", attempt)
		}
	}
	if err := w.s.Push(ctx, p, reg, false); err != nil {
		t.Fatal(err)
	}
	again, foundDone := tasks.TrackFoundDone(ctx)
	if err := w.s.Push(again, p, reg, false); err != nil || !foundDone() { // the task again, after a crash: nothing repeats
		t.Fatalf("the push again = %v (found done %v), want nothing done, and said so", err, foundDone())
	}
	if len(reg.pushes) != 1 {
		t.Errorf("pushes by change id %v, want one change", reg.pushes)
	}
	for change, n := range reg.pushes {
		if n != 3 {
			t.Errorf("change %s pushed %d times, want 3 (two failures and the success; not after)", change, n)
		}
	}
	want := "order.recorded order.transfer_started transfer.requested transfer.completed order.transfer_completed"
	w.wantEvents(t, "prt_a", want)
	v, err := w.s.Get(ctx, "prt_a", models.EnvSandbox, p.OrderID)
	if err != nil || v.Status != models.OrderTransferCompleted || v.TransferCompletedAt == nil || len(v.Timeline) != 5 ||
		v.Timeline[4].Actor != ActorRegistry || v.Timeline[4].Status != models.OrderTransferCompleted {
		t.Errorf("order after the push = %+v, %v", v, err)
	}
}

func TestARefusedPushFailsAndOpsRetry(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	p := startedTransfer(t, w, "refused.com", sandbox.RefusingRecipient)
	reg := sandbox.New(w.db, 0)
	_, err := w.s.Move(ctx, p.OrderID, StartTransfer, MoveInput{Recipient: "another"})
	wantCode(t, "a second start while the push is under way", err, fault.Conflict)
	if err := w.s.Push(ctx, p, reg, false); err != nil {
		t.Fatalf("a refusal is not retried by the task: %v", err)
	}
	v, _ := w.s.Get(ctx, "prt_a", models.EnvSandbox, p.OrderID)
	last := v.Timeline[len(v.Timeline)-1]
	if v.Status != models.OrderTransferInProgress || last.Event == nil || *last.Event != EventTransferFailed || !strings.Contains(last.Note, "refused") {
		t.Fatalf("after a refused push: %s, last step %+v", v.Status, last)
	}
	if _, err := w.s.Move(ctx, p.OrderID, StartTransfer, MoveInput{Recipient: "bad recipient!"}); err == nil {
		t.Error("a malformed recipient was taken")
	}
	if _, err := w.s.Move(ctx, p.OrderID, StartTransfer, MoveInput{Recipient: "buyer-registrar"}); err != nil {
		t.Fatalf("ops retry after transfer.failed: %v", err)
	}
	want := "order.recorded order.transfer_started transfer.requested transfer.failed order.transfer_started"
	w.wantEvents(t, "prt_a", want)
}

// The last attempt ends without an answer: the registry may have made
// the push all the same, so the push is left unconfirmed, in flight.
func TestTheLastAttemptWithoutAnAnswerLeavesThePushUnconfirmed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	p := startedTransfer(t, w, "downtoolong.com", "buyer-registrar")
	reg := &flakyPusher{Provider: sandbox.New(w.db, 0), down: 100, pushes: map[string]int{}}
	if err := w.s.Push(ctx, p, reg, true); err != nil {
		t.Fatalf("the last attempt = %v, want its outcome recorded", err)
	}
	if got := w.events(t, "prt_a"); got[len(got)-1] != EventTransferUnconfirmed {
		t.Errorf("events %v, want transfer.unconfirmed last", got)
	}
	_, err := w.s.Move(ctx, p.OrderID, Cancel, MoveInput{})
	wantCode(t, "cancel of an unconfirmed push", err, fault.Conflict)
}

// pushKeeper is a registry that makes a push once, as Realtime Register
// does: the repeat of a push it made is refused, as the account no longer
// holds the name. lose makes it lose the answers to the first requests
// (a timeout, or a 503 after the push was made); with made set, it
// tells there when it made a push and answers only once release closes.
type pushKeeper struct {
	registry.Provider
	mu            sync.Mutex
	lose          int
	pushed        map[string]bool
	made, release chan struct{}
}

func (k *pushKeeper) PushDomain(ctx context.Context, name, recipient, change string) error {
	k.mu.Lock()
	if k.pushed[name] {
		k.mu.Unlock()
		return fmt.Errorf("push %s: %w: the domain is not in the account", name, registry.ErrPushRefused)
	}
	err := k.Provider.PushDomain(ctx, name, recipient, change)
	k.pushed[name] = err == nil
	lost := k.lose > 0
	if lost {
		k.lose--
	}
	k.mu.Unlock()
	if k.made != nil {
		close(k.made)
		<-k.release
	}
	if lost {
		return fmt.Errorf("registry answered 503: %w", registry.ErrTransient)
	}
	return err
}

func TestPushOutcome(t *testing.T) {
	t.Parallel()
	refused := fmt.Errorf("rtr: 422: %w", registry.ErrPushRefused)
	down := fmt.Errorf("rtr: 503: %w", registry.ErrTransient)
	odd := errors.New("push refused (rtr: 422), and whether the account still holds it is unknown: rtr: 401")
	for _, c := range []struct {
		what         string
		err          error
		again, final bool
		want         string
	}{
		{"a success", nil, true, true, EventTransferCompleted},
		{"the first request refused", refused, false, false, EventTransferFailed},
		{"the first request refused, on the last attempt", refused, false, true, EventTransferFailed},
		{"a refusal after an earlier request", refused, true, false, EventTransferUnconfirmed},
		{"no answer", down, true, false, ""},
		{"no answer by the last attempt", down, true, true, EventTransferUnconfirmed},
		{"an answer the provider could not read", odd, false, false, EventTransferUnconfirmed},
	} {
		if got, reason := pushOutcome(c.err, c.again, c.final); got != c.want || (got != EventTransferCompleted && got != "" && reason == "") {
			t.Errorf("%s: %q (reason %q), want %q with a reason", c.what, got, reason, c.want)
		}
	}
}

// Two runs of a push overlap (a task handed back while its first run
// still waits for the registry): the second is refused the repeat and
// records the push unconfirmed, then the first learns it succeeded.
// The success is recorded and delivers the order.
func TestASuccessAfterAnUnconfirmedEndDelivers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	p := startedTransfer(t, w, "overlap.com", "buyer-registrar")
	reg := &pushKeeper{Provider: sandbox.New(w.db, 0), pushed: map[string]bool{}, made: make(chan struct{}), release: make(chan struct{})}
	first := make(chan error, 1)
	go func() { first <- w.s.Push(ctx, p, reg, false) }()
	<-reg.made
	second := &pushKeeper{Provider: reg, pushed: map[string]bool{"overlap.com": true}}
	if err := w.s.Push(ctx, p, second, false); err != nil {
		t.Fatal(err)
	}
	close(reg.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	want := "order.recorded order.transfer_started transfer.requested transfer.unconfirmed transfer.completed order.transfer_completed"
	w.wantEvents(t, "prt_a", want)
	if again := w.s.Push(ctx, p, reg, false); again != nil {
		t.Errorf("the task again = %v", again)
	}
}

// TestARetriedPushRefusedIsLeftForOps: the registry made the push but its
// answer was lost, so the task asked again, and the registry refused the
// repeat. That refusal does not say the push failed: the push is left
// unconfirmed, and the order stays locked (no refund, cancel or second
// push, the name still sold) until ops, having looked at the registry,
// record fail-transfer or confirm-delivery.
func TestARetriedPushRefusedIsLeftForOps(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	unconfirmed := func(domain string) tasks.TransferPushPayload {
		t.Helper()
		p := startedTransfer(t, w, domain, "buyer-registrar")
		reg := &pushKeeper{Provider: sandbox.New(w.db, 0), lose: 1, pushed: map[string]bool{}}
		if err := w.s.Push(ctx, p, reg, false); err == nil {
			t.Fatal("a push without an answer ended")
		}
		if err := w.s.Push(ctx, p, reg, false); err != nil {
			t.Fatalf("the retry refused = %v, want its outcome recorded", err)
		}
		var steps []models.OrderStep
		w.db.Where("push_id = ?", p.Push).Order("id").Find(&steps)
		if len(steps) != 2 || steps[1].Event != EventTransferUnconfirmed || !strings.Contains(steps[1].Note, "refused") {
			t.Fatalf("steps of the push %+v, want requested, then unconfirmed naming the refusal", steps)
		}
		again, foundDone := tasks.TrackFoundDone(ctx)
		if err := w.s.Push(again, p, reg, false); err != nil || !foundDone() {
			t.Fatalf("the task again = %v (found done %v), want nothing done", err, foundDone())
		}
		for _, move := range []Action{Cancel, StartTransfer} {
			_, err := w.s.Move(ctx, p.OrderID, move, MoveInput{Recipient: "another"})
			if e := wantCode(t, string(move)+" of an unconfirmed push", err, fault.Conflict); !strings.Contains(e.Message, "fail-transfer") {
				t.Errorf("%s: message %q does not say what ops do", move, e.Message)
			}
		}
		_, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: p.OrderID, Reason: "changed my mind"})
		wantCode(t, "refund of an unconfirmed push", err, fault.Conflict)
		var l models.SandboxListing
		if w.db.Take(&l, "domain = ?", domain); l.SoldAt == nil {
			t.Errorf("%s is on sale again while its push is unconfirmed", domain)
		}
		return p
	}

	made := unconfirmed("madeafterall.com")
	notMade := unconfirmed("notmade.com")
	waiting := func() map[string]bool {
		t.Helper()
		found, err := w.s.Unconfirmed(ctx, []string{made.OrderID, notMade.OrderID, "ord_nosuch"})
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	if found := waiting(); len(found) != 2 || !found[made.OrderID] || !found[notMade.OrderID] {
		t.Errorf("unconfirmed %v, want both orders", found)
	}
	if v, err := w.s.Move(ctx, made.OrderID, ConfirmDelivery, MoveInput{}); err != nil || v.Status != models.OrderTransferCompleted {
		t.Fatalf("confirm-delivery of an unconfirmed push = %+v, %v", v, err)
	}

	v, err := w.s.Move(ctx, notMade.OrderID, FailTransfer, MoveInput{})
	if err != nil || v.Status != models.OrderTransferInProgress {
		t.Fatalf("fail-transfer = %+v, %v", v, err)
	}
	var steps []models.OrderStep
	w.db.Where("push_id = ?", notMade.Push).Order("id").Find(&steps)
	if last := steps[len(steps)-1]; len(steps) != 3 || last.Event != EventTransferFailed || last.Actor != ActorOps {
		t.Errorf("steps of the push %+v, want transfer.failed by ops last", steps)
	}
	var failed models.Event
	w.db.Take(&failed, "type = ?", EventTransferFailed) // the only one
	var data struct {
		Transfer struct {
			Push              int64
			Recipient, Reason string
		}
	}
	if err := json.Unmarshal(failed.Data, &data); err != nil || data.Transfer.Push != notMade.Push ||
		data.Transfer.Recipient != "buyer-registrar" || !strings.Contains(data.Transfer.Reason, "ops") {
		t.Errorf("transfer.failed by ops has data %s (%v), want its push, recipient and reason", failed.Data, err)
	}
	_, err = w.s.Move(ctx, notMade.OrderID, FailTransfer, MoveInput{})
	wantCode(t, "fail-transfer again", err, fault.Conflict)
	if found := waiting(); len(found) != 0 {
		t.Errorf("unconfirmed %v after delivery and fail-transfer, want none", found)
	}
	if v, err := w.s.Move(ctx, notMade.OrderID, Cancel, MoveInput{}); err != nil || v.Status != models.OrderCancelled {
		t.Fatalf("cancel after fail-transfer = %+v, %v", v, err)
	}
	want := "order.recorded order.transfer_started transfer.requested transfer.unconfirmed " +
		"order.recorded order.transfer_started transfer.requested transfer.unconfirmed " +
		"order.transfer_completed transfer.failed order.refunded"
	w.wantEvents(t, "prt_a", want)
}

// fail-transfer is for an unconfirmed push only: not for one queued or
// refused, nor for an order without a push.
func TestFailTransferNeedsAnUnconfirmedPush(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	queued := startedTransfer(t, w, "stillqueued.com", "buyer-registrar")
	_, err := w.s.Move(ctx, queued.OrderID, FailTransfer, MoveInput{})
	wantCode(t, "fail-transfer of a queued push", err, fault.Conflict)

	refused := startedTransfer(t, w, "refusedfirst.com", sandbox.RefusingRecipient)
	if err := w.s.Push(ctx, refused, sandbox.New(w.db, 0), false); err != nil {
		t.Fatal(err)
	}
	_, err = w.s.Move(ctx, refused.OrderID, FailTransfer, MoveInput{})
	wantCode(t, "fail-transfer of a refused push", err, fault.Conflict)

	w.list(t, "nopush.com", 10_000)
	o, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder("nopush.com", 10_000, ""))
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.s.Move(ctx, o.PublicID, FailTransfer, MoveInput{})
	wantCode(t, "fail-transfer of an order never pushed", err, fault.Conflict)
	if got, want := Actions(models.OrderTransferInProgress, models.ReviewNone, false), []Action{StartTransfer, ConfirmDelivery, Cancel}; !slices.Equal(got, want) {
		t.Errorf("moves of a transfer in progress %v, want %v", got, want)
	}
	if got, want := Actions(models.OrderTransferInProgress, models.ReviewNone, true), []Action{StartTransfer, ConfirmDelivery, FailTransfer, Cancel}; !slices.Equal(got, want) {
		t.Errorf("moves of a transfer whose push is unconfirmed %v, want %v", got, want)
	}
}

// TestNoRefundWhileAPushIsInFlight: from start-transfer until its push
// fails, a refund or a cancel is a conflict naming the transfer, and the
// name stays sold; after a failed push both work again and the name goes
// back on sale; after a push that succeeded the order is delivered and no
// refund, cancel or manual confirmation moves it.
func TestNoRefundWhileAPushIsInFlight(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	sold := func(domain string) bool {
		var l models.SandboxListing
		w.db.Take(&l, "domain = ?", domain)
		return l.SoldAt != nil
	}
	refuseAll := func(orderID, domain, when string) {
		t.Helper()
		_, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: orderID, Reason: "changed my mind"})
		if e := wantCode(t, "refund "+when, err, fault.Conflict); !strings.Contains(e.Message, "transfer") {
			t.Errorf("refund %s: message %q does not name the transfer", when, e.Message)
		}
		_, err = w.s.Move(ctx, orderID, Cancel, MoveInput{})
		wantCode(t, "cancel "+when, err, fault.Conflict)
		if !sold(domain) {
			t.Errorf("%s is on sale again %s", domain, when)
		}
	}

	queued := startedTransfer(t, w, "queued.com", "buyer-registrar")
	refuseAll(queued.OrderID, "queued.com", "while the push is queued")
	reg := &blockingPusher{Provider: sandbox.New(w.db, 0), entered: make(chan struct{}), release: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- w.s.Push(ctx, queued, reg, false) }()
	<-reg.entered
	refuseAll(queued.OrderID, "queued.com", "while the registry is asked")
	close(reg.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	refuseAll(queued.OrderID, "queued.com", "after the push succeeded")
	if _, err := w.s.Move(ctx, queued.OrderID, ConfirmDelivery, MoveInput{}); err == nil {
		t.Error("confirm-delivery of an order the registry delivered was taken")
	}

	failed := startedTransfer(t, w, "failed.com", sandbox.RefusingRecipient)
	if err := w.s.Push(ctx, failed, sandbox.New(w.db, 0), false); err != nil {
		t.Fatal(err)
	}
	part := int64(1_000)
	if r, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: failed.OrderID, Reason: "part", AmountCents: &part}); err != nil || r.OrderStatus != models.OrderTransferInProgress {
		t.Fatalf("partial refund after a failed push = %+v, %v", r, err)
	}
	if v, err := w.s.Move(ctx, failed.OrderID, Cancel, MoveInput{}); err != nil || v.Status != models.OrderCancelled {
		t.Fatalf("cancel after a failed push = %+v, %v", v, err)
	}
	if sold("failed.com") {
		t.Error("the name of an order cancelled after a failed push is not back on sale")
	}
}

// blockingPusher holds a push until released, telling when it began.
type blockingPusher struct {
	registry.Provider
	entered, release chan struct{}
}

func (b *blockingPusher) PushDomain(ctx context.Context, name, recipient, change string) error {
	close(b.entered)
	<-b.release
	return b.Provider.PushDomain(ctx, name, recipient, change)
}

// TestRefundsRacingTransfers: partners refund orders while ops start
// their transfers, all at once. Each order ends either refunded with its
// name on sale and no push, or pushed and delivered with its name sold:
// never both.
func TestRefundsRacingTransfers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	const n = 12
	ids := make([]string, n)
	for i := range n {
		domain := fmt.Sprintf("race%02d.com", i)
		w.list(t, domain, 10_000)
		o, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder(domain, 10_000, ""))
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = o.PublicID
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() { w.s.Move(ctx, id, StartTransfer, MoveInput{Recipient: "buyer-registrar"}) })
		wg.Go(func() { w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: id, Reason: "race"}) })
	}
	wg.Wait()
	var entries []models.OutboxEntry
	w.db.Where("task_type = ?", tasks.TypeTransferPush).Find(&entries)
	reg := sandbox.New(w.db, 0)
	for _, e := range entries {
		var p tasks.TransferPushPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if err := w.s.Push(ctx, p, reg, false); err != nil {
			t.Fatal(err)
		}
	}
	var refunded, delivered int
	for _, id := range ids {
		var o models.Order
		w.db.Take(&o, "public_id = ?", id)
		var l models.SandboxListing
		w.db.Take(&l, "id = ?", o.ListingID)
		var pushed int64
		w.db.Model(&models.OrderStep{}).Where("order_id = ? AND event = ?", id, EventTransferCompleted).Count(&pushed)
		switch {
		case o.Status == models.OrderRefunded && l.SoldAt == nil && pushed == 0:
			refunded++
		case o.Status == models.OrderTransferCompleted && l.SoldAt != nil && pushed == 1:
			delivered++
		default:
			t.Errorf("%s ended %s, listing sold %v, %d pushes completed", id, o.Status, l.SoldAt != nil, pushed)
		}
	}
	t.Logf("%d refunded first, %d transferred first", refunded, delivered)
}

// A push whose order was delivered by hand before it ran is not made: the
// registry is not asked, and the timeline says so, without an event.
func TestAPushAfterAManualDeliveryIsNotMade(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	p := startedTransfer(t, w, "byhand.com", "buyer-registrar")
	if _, err := w.s.Move(ctx, p.OrderID, ConfirmDelivery, MoveInput{}); err != nil {
		t.Fatal(err)
	}
	reg := &flakyPusher{Provider: sandbox.New(w.db, 0), pushes: map[string]int{}}
	for range 2 {
		if err := w.s.Push(ctx, p, reg, false); err != nil {
			t.Fatal(err)
		}
	}
	var steps []models.OrderStep
	w.db.Where("push_id = ?", p.Push).Find(&steps)
	if len(reg.pushes) != 0 || len(steps) != 1 || steps[0].Event != "" || !strings.Contains(steps[0].Note, "not made") {
		t.Errorf("pushes %v, steps of the push %+v; want none asked and one step saying it was not made", reg.pushes, steps)
	}
	want := "order.recorded order.transfer_started order.transfer_completed"
	w.wantEvents(t, "prt_a", want)
}

// A push that asked the registry, then crashed, and whose order was
// delivered by hand and settled before it ran again, still ends: it asks
// again under the same change id and records the answer, without moving
// the order. Left without its answer it would stay to do for ever.
func TestAPushAskedBeforeAManualDeliveryEnds(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	p := startedTransfer(t, w, "askedfirst.com", "buyer-registrar")
	reg := &flakyPusher{Provider: sandbox.New(w.db, 0), down: 1, pushes: map[string]int{}}
	if err := w.s.Push(ctx, p, reg, false); err == nil {
		t.Fatal("the push with the registry down succeeded")
	}
	if _, err := w.s.Move(ctx, p.OrderID, ConfirmDelivery, MoveInput{}); err != nil {
		t.Fatal(err)
	}
	w.db.Model(&models.Order{}).Where("public_id = ?", p.OrderID).Update("status", models.OrderSettled)
	for range 2 {
		if err := w.s.Push(ctx, p, reg, false); err != nil {
			t.Fatal(err)
		}
	}
	var steps []models.OrderStep
	w.db.Where("push_id = ?", p.Push).Order("id").Find(&steps)
	change := fmt.Sprintf("%s-push-%d", p.OrderID, p.Push)
	if len(reg.pushes) != 1 || reg.pushes[change] != 2 || len(steps) != 2 || steps[0].Event != EventTransferRequested || steps[1].Event != EventTransferCompleted {
		t.Errorf("pushes %v, steps of the push %+v; want one change asked twice, then requested and completed", reg.pushes, steps)
	}
	want := "order.recorded order.transfer_started transfer.requested order.transfer_completed transfer.completed"
	w.wantEvents(t, "prt_a", want)
	var o models.Order
	w.db.Take(&o, "public_id = ?", p.OrderID)
	if o.Status != models.OrderSettled {
		t.Errorf("order is %s after the push, want it left %s", o.Status, models.OrderSettled)
	}
}
