package webhook

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/pagecursor/pagecursortest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
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
	w.register(t, "prt_1", models.EnvSandbox, ok)
	w.register(t, "prt_2", models.EnvSandbox, down)
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

// A page in the middle of every delivery, the ops view's default, reads
// about its own rows: the deliveries' creation is indexed.
func TestDeliveriesMiddlePageReadsItsOwnRows(t *testing.T) {
	t.Parallel()
	w, db := newPostgresWorld(t, "the paging itself is TestDeliveriesAsOpsSeeThem")
	ctx := context.Background()
	w.register(t, "prt_1", models.EnvSandbox, receiver(t, func(http.ResponseWriter, *http.Request) {}))
	var endpoint models.WebhookEndpoint
	if err := db.Take(&endpoint, "partner_id = ?", "prt_1").Error; err != nil {
		t.Fatal(err)
	}
	seedDeliveries(t, db, 3000, func(i int, d *models.WebhookDelivery) {
		d.EndpointID, d.CreatedAt = endpoint.ID, seedStart.Add(time.Duration(i/2)*time.Second)
	})
	_, cursors := pagecursortest.Walk(t, func(cursor string) ([]DeliveryView, string, error) {
		return w.s.Deliveries(ctx, DeliveryFilter{Limit: 100, Cursor: cursor})
	})
	// The page and the next one's first, the rest of the cursor's second
	// and the whole of the page's last (105 deliveries), the event of each
	// delivery kept (103) and the endpoint: 209 rows.
	read := modelstest.RowsReadBy(t, db, "e.partner_id", func() error {
		_, _, err := w.s.Deliveries(ctx, DeliveryFilter{Limit: 100, Cursor: cursors[len(cursors)/2]})
		return err
	})
	if read > 210 {
		t.Errorf("a page of 100 in the middle of the deliveries read %v rows; want at most 210", read)
	}
}

// A partner's page of deliveries reads about its own rows: a page per
// endpoint of the partner, from the index of each endpoint's deliveries,
// not every delivery of the partner, sorted. Walking the pages gives each
// of the partner's deliveries once, newest first.
func TestAPartnersPageReadsItsOwnRows(t *testing.T) {
	t.Parallel()
	w, db := newPostgresWorld(t, "the paging itself is TestDeliveriesAsOpsSeeThem")
	ctx := context.Background()
	hook := receiver(t, func(http.ResponseWriter, *http.Request) {})
	var endpoints []string // prt_0 has one in each environment
	for i := range 100 {
		envs := []string{models.EnvSandbox}
		if i == 0 {
			envs = append(envs, models.EnvLive)
		}
		for _, env := range envs {
			e := w.register(t, fmt.Sprintf("prt_%d", i), env, hook)
			endpoints = append(endpoints, e.ID)
		}
	}
	// The delivery whose event is gone: one of prt_0's sandbox endpoint,
	// ninth from the newest, so that the walk would end at its page.
	gone := len(endpoints) * 190
	want := map[string][]string{} // prt_0's, newest first, in each environment and in both
	seedDeliveries(t, db, 20_000, func(i int, d *models.WebhookDelivery) {
		d.EndpointID, d.CreatedAt = endpoints[i%len(endpoints)], seedStart.Add(time.Duration(i/3)*time.Second)
		if i%7 == 0 {
			d.State = models.DeliveryFailed
		}
		if env := map[string]string{endpoints[0]: models.EnvSandbox, endpoints[1]: models.EnvLive}[d.EndpointID]; env != "" && i != gone {
			want[""] = append([]string{d.ID}, want[""]...)
			want[env] = append([]string{d.ID}, want[env]...)
			if d.State == models.DeliveryFailed {
				want[d.State+env] = append([]string{d.ID}, want[d.State+env]...)
			}
		}
	})
	// A delivery whose event is gone (a redelivery racing the cleanup
	// leaves one until the next cleanup) is not listed, and does not end
	// the walk early.
	if err := db.Delete(&models.Event{}, "id = ?", fmt.Sprintf("evt_%05d", gone)).Error; err != nil {
		t.Fatal(err)
	}
	var cursors []string
	for _, f := range []DeliveryFilter{{}, {Environment: models.EnvSandbox}, {Environment: models.EnvLive, State: models.DeliveryFailed}} {
		f.PartnerID = "prt_0"
		page, walked := pagecursortest.Walk(t, func(cursor string) ([]DeliveryView, string, error) {
			f.Limit, f.Cursor = 25, cursor
			return w.s.Deliveries(ctx, f)
		})
		var got []string
		for _, d := range page {
			got = append(got, d.ID)
		}
		if f.Environment == "" {
			cursors = append(cursors, walked...)
		}
		if w := want[f.State+f.Environment]; !slices.Equal(got, w) {
			t.Fatalf("%+v: walked %d deliveries of prt_0; want its %d, newest first", f, len(got), len(w))
		}
	}
	// Each of the partner's two endpoints' ranges: the page and the next
	// one's first (26 deliveries each) and the event of each, and the
	// scan of the 101 endpoints: 205 rows. Joined, the page walked the
	// index of every delivery's creation past the other partners' ones:
	// 1,445 rows.
	read := modelstest.RowsReadBy(t, db, "e.partner_id", func() error {
		_, _, err := w.s.Deliveries(ctx, DeliveryFilter{PartnerID: "prt_0", Limit: 25, Cursor: cursors[len(cursors)/2]})
		return err
	})
	if most := float64(2*26 + 2*26 + len(endpoints)); read > most {
		t.Errorf("a page of 25 of prt_0's deliveries read %v rows; want at most %v", read, most)
	}
	// The failed of one endpoint have an index of their own: the page and
	// the next one's first, their events, and the endpoints (153 rows).
	// Without it, Postgres ANDed the bitmaps of the endpoint's range and of
	// every failed delivery: 3,216 rows.
	read = modelstest.RowsReadBy(t, db, "e.partner_id", func() error {
		_, _, err := w.s.Deliveries(ctx, DeliveryFilter{PartnerID: "prt_0", Environment: models.EnvLive, State: models.DeliveryFailed, Limit: 25})
		return err
	})
	if most := float64(26 + 26 + len(endpoints)); read > most {
		t.Errorf("a page of 25 of prt_0's failed live deliveries read %v rows; want at most %v", read, most)
	}
}

// Ops' page of the failed deliveries reads about its own rows, from a
// plan made for any values too: the failed ones have an index of their
// own, partial, so the state is written into the query. Walking the index
// of every delivery's creation read the delivered ones in between. (The
// pending ones are the newest, or many when a receiver is down: that
// walk finds them soon, and the planner takes it.)
func TestFailedPageReadsItsOwnRows(t *testing.T) {
	t.Parallel()
	w, db := newPostgresWorld(t, "the paging itself is TestDeliveriesAsOpsSeeThem")
	ctx := context.Background()
	e := w.register(t, "prt_1", models.EnvSandbox, receiver(t, func(http.ResponseWriter, *http.Request) {}))
	want := map[string][]string{} // by state, newest first
	seedDeliveries(t, db, 20_000, func(i int, d *models.WebhookDelivery) {
		d.EndpointID = e.ID
		switch {
		case i%200 == 3:
			d.State = models.DeliveryFailed
		case i%500 == 7:
			d.State = models.DeliveryPending
		}
		want[d.State] = append([]string{d.ID}, want[d.State]...)
	})
	for _, state := range []string{models.DeliveryFailed, models.DeliveryPending} {
		statements := modelstest.CaptureStatements(t, db, "e.partner_id")
		page, _, err := w.s.Deliveries(ctx, DeliveryFilter{State: state, Limit: 10})
		if err != nil || len(page) != 10 || len(statements()) != 1 {
			t.Fatalf("%s: %d deliveries, %d queries, %v; want 10 and 1", state, len(page), len(statements()), err)
		}
		for i, d := range page {
			if d.ID != want[state][i] {
				t.Errorf("%s delivery %d is %s, want %s", state, i, d.ID, want[state][i])
			}
		}
		if state != models.DeliveryFailed {
			continue
		}
		// The page's 10 and the next one's first, their events and their
		// endpoint: 23 rows.
		root, plan := modelstest.ExplainGeneric(t, db, statements()[0])
		if read := root.RowsRead(); read > 23 {
			t.Errorf("a page of 10 failed deliveries read %v rows from a plan for any values; want at most 23\n%s", read, plan)
		}
	}
}

// Every delivery state a filter takes is written out, and nothing else.
func TestEveryStateIsWrittenOut(t *testing.T) {
	modelstest.WrittenOut(t, models.DeliveriesIn, "state", DeliveryStates)
}

// seedStart is when seedDeliveries' first delivery was made.
var seedStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// seedDeliveries writes n deliveries, each of an event of its own, as
// shape makes delivery i from its defaults (delivered, made i seconds
// after seedStart), and analyzes the tables.
func seedDeliveries(t *testing.T, db *gorm.DB, n int, shape func(i int, d *models.WebhookDelivery)) {
	t.Helper()
	deliveries, events := make([]models.WebhookDelivery, n), make([]models.Event, n)
	for i := range deliveries {
		deliveries[i] = models.WebhookDelivery{ID: fmt.Sprintf("dlv_%05d", i), State: models.DeliveryDelivered, CreatedAt: seedStart.Add(time.Duration(i) * time.Second)}
		shape(i, &deliveries[i])
		events[i] = models.Event{ID: fmt.Sprintf("evt_%05d", i), PartnerID: "any", Environment: models.EnvSandbox, Type: TypeTest,
			Data: []byte(`{}`), CreatedAt: deliveries[i].CreatedAt}
	}
	if err := models.InsertEvents(db, events); err != nil {
		t.Fatal(err)
	}
	for i, ev := range events {
		deliveries[i].EventSeq, deliveries[i].Subject = ev.Seq, ev.ID
	}
	if err := models.InsertWebhookDeliveries(db, deliveries); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("ANALYZE webhook_deliveries; ANALYZE events; ANALYZE webhook_endpoints").Error; err != nil {
		t.Fatal(err)
	}
}

// A fan-out reads its own deliveries, by their keys, however many others
// are pending: a settlement run makes its deliveries pending faster than
// the statistics follow, and a look-up by state as well as by key was
// then planned on the pending ones' index and read all of them, for
// each fan-out.
func TestFanOutReadsOnlyItsDeliveries(t *testing.T) {
	t.Parallel()
	w, db := newPostgresWorld(t, "TestABatchsDeliveriesShareOneFanOut checks what a fan-out enqueues")
	seedDeliveries(t, db, 4000, func(int, *models.WebhookDelivery) {})
	// Pending since the statistics were taken, as a run's deliveries are.
	if err := db.Exec("UPDATE webhook_deliveries SET state = ? WHERE id >= 'dlv_02000'", models.DeliveryPending).Error; err != nil {
		t.Fatal(err)
	}
	ids := []string{"dlv_00007", "dlv_02001", "dlv_02500", "dlv_03999"}
	read := modelstest.RowsReadBy(t, db, "webhook_deliveries", func() error { return w.s.FanOut(context.Background(), w.ob, ids) })
	if read > float64(len(ids)) {
		t.Errorf("a fan-out of %d deliveries read %.0f rows; want at most its own", len(ids), read)
	}
}
