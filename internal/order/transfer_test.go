package order

import (
	"context"
	"encoding/json"
	"fmt"
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
	if got := strings.Join(w.events(t, "prt_a"), " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
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
	if got := strings.Join(w.events(t, "prt_a"), " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
}

func TestTheLastTransientFailureFailsThePush(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	p := startedTransfer(t, w, "downtoolong.com", "buyer-registrar")
	reg := &flakyPusher{Provider: sandbox.New(w.db, 0), down: 100, pushes: map[string]int{}}
	if err := w.s.Push(ctx, p, reg, true); err != nil {
		t.Fatalf("the last attempt = %v, want the failure recorded", err)
	}
	if got := w.events(t, "prt_a"); got[len(got)-1] != EventTransferFailed {
		t.Errorf("events %v, want transfer.failed last", got)
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
	if got := strings.Join(w.events(t, "prt_a"), " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
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
	if got := strings.Join(w.events(t, "prt_a"), " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	var o models.Order
	w.db.Take(&o, "public_id = ?", p.OrderID)
	if o.Status != models.OrderSettled {
		t.Errorf("order is %s after the push, want it left %s", o.Status, models.OrderSettled)
	}
}
