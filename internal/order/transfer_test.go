package order

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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
	if err := w.s.Push(ctx, p, reg, false); err != nil { // the task again, after a crash: nothing repeats
		t.Fatal(err)
	}
	if len(reg.pushes) != 1 {
		t.Errorf("pushes by change id %v, want one change", reg.pushes)
	}
	for change, n := range reg.pushes {
		if n != 3 {
			t.Errorf("change %s pushed %d times, want 3 (two failures and the success; not after)", change, n)
		}
	}
	want := "order.recorded order.transfer_started transfer.requested transfer.completed"
	if got := strings.Join(w.events(t, "prt_a"), " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	v, err := w.s.Get(ctx, "prt_a", models.EnvSandbox, p.OrderID)
	if err != nil || v.Status != models.OrderTransferInProgress || len(v.Timeline) != 4 || v.Timeline[3].Actor != ActorRegistry {
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
