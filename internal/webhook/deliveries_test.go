package webhook

import (
	"context"
	"net/http"
	"testing"

	"github.com/domaind/domaind/models"
)

// Ops look into deliveries newest first, filtered by partner, environment
// and state, each with its event, endpoint, attempts and how long it took
// to arrive; a wrong filter is refused by name.
func TestDeliveriesAsOpsSeeThem(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	ok := receiver(t, func(rw http.ResponseWriter, r *http.Request) {})
	down := receiver(t, func(rw http.ResponseWriter, r *http.Request) { rw.WriteHeader(http.StatusBadGateway) })
	if _, err := w.s.Register(ctx, "prt_1", models.EnvSandbox, ok, receiverSecret); err != nil {
		t.Fatal(err)
	}
	if _, err := w.s.Register(ctx, "prt_2", models.EnvSandbox, down, receiverSecret); err != nil {
		t.Fatal(err)
	}
	delivered := w.emit(t, "prt_1", models.EnvSandbox, TypeTest)
	failing := w.emit(t, "prt_2", models.EnvSandbox, TypeTest)
	for _, ev := range []models.Event{delivered, failing} {
		w.s.Deliver(ctx, w.ob, w.deliveries(t, ev)[0].ID, true) // the last attempt: the failing one gives up
	}
	all, next, err := w.s.Deliveries(ctx, DeliveryFilter{Limit: 10})
	if err != nil || next != "" || len(all) != 2 || all[0].EventID != failing.ID || all[1].EventID != delivered.ID {
		t.Fatalf("every delivery = %+v, %q, %v; want the failing one first", all, next, err)
	}
	f, d := all[0], all[1]
	if f.State != models.DeliveryFailed || f.LastStatus != http.StatusBadGateway || f.PartnerID != "prt_2" || f.URL != down || f.Latency() != 0 ||
		f.EventType != TypeTest || f.Attempts != 1 {
		t.Errorf("the failed delivery = %+v", f)
	}
	if d.State != models.DeliveryDelivered || d.LastStatus != http.StatusOK || d.Latency() <= 0 || d.Environment != models.EnvSandbox {
		t.Errorf("the delivered one = %+v, latency %s", d, d.Latency())
	}
	failed, _, err := w.s.Deliveries(ctx, DeliveryFilter{State: models.DeliveryFailed, PartnerID: "prt_2"})
	if err != nil || len(failed) != 1 || failed[0].ID != f.ID {
		t.Errorf("prt_2's failed deliveries = %+v, %v", failed, err)
	}
	page, next, err := w.s.Deliveries(ctx, DeliveryFilter{Limit: 1})
	if err != nil || len(page) != 1 || next == "" {
		t.Fatalf("a page of one = %+v, %q, %v", page, next, err)
	}
	if rest, last, err := w.s.Deliveries(ctx, DeliveryFilter{Limit: 1, Cursor: next}); err != nil || len(rest) != 1 || rest[0].ID != d.ID || last != "" {
		t.Errorf("the next page = %+v, %q, %v", rest, last, err)
	}
	if _, _, err := w.s.Deliveries(ctx, DeliveryFilter{State: "lost"}); codeOf(err) != "validation_error" {
		t.Errorf("a wrong state = %v, want a validation error", err)
	}
}
