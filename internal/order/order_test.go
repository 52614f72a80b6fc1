package order

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/ledger/ledgertest"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

// world is the sales of a fresh database, on a clock the test moves.
type world struct {
	s   *Service
	db  *gorm.DB
	now time.Time
}

func newWorld(t *testing.T) *world {
	t.Helper()
	db := modelstest.NewDB(t)
	ledgertest.CheckAtEnd(t, db)
	r := platformtest.NewRedis(t)
	ob := outbox.New(db, r.Client, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { ob.Close() })
	w := &world{db: db, now: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	w.s = New(db, ob, []byte("test-secret-key-0123456789abcdef"), Options{QuoteTTL: 10 * time.Minute, ReviewThresholdCents: 500_000},
		func() time.Time { return w.now })
	for _, id := range []string{"prt_a", "prt_b", "prt_c", "prt_d", "prt_e", "prt_f", "prt_g", "prt_h"} {
		if err := db.Create(&models.Partner{ID: id, Name: id, ContactEmail: id + "@example.com", Status: "approved",
			CommissionBPS: 1500, CreatedAt: w.now}).Error; err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// list puts domain in the sandbox at binCents and returns its id.
func (w *world) list(t *testing.T, domain string, binCents int64) string {
	t.Helper()
	l := models.SandboxListing{ID: models.NewID(), Domain: domain, TLD: domain[strings.LastIndexByte(domain, '.')+1:],
		BINCents: &binCents, Currency: "USD", CreatedAt: w.now}
	if err := w.db.Create(&l).Error; err != nil {
		t.Fatal(err)
	}
	return l.ID
}

func newOrder(domain string, price int64, quoteID string) NewOrder {
	return NewOrder{Domain: domain, ExpectedPrice: &price, Currency: "USD", QuoteID: quoteID, ExternalPaymentRef: "pay_123",
		Buyer: &Buyer{Email: "Buyer@Example.com", Name: "Ada Buyer", Country: "nl"}}
}

func wantCode(t *testing.T, what string, err error, code fault.Code) *fault.Error {
	t.Helper()
	e, ok := fault.As(err)
	if !ok || e.Code != code {
		t.Fatalf("%s: err = %v, want %s", what, err, code)
	}
	return e
}

// events are the types of the partner's events, oldest first.
func (w *world) events(t *testing.T, partnerID string) []string {
	t.Helper()
	var evs []models.Event
	w.db.Where("partner_id = ?", partnerID).Order("seq").Find(&evs)
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

// wantEvents checks the types of the partner's events, oldest first,
// against want, separated by spaces.
func (w *world) wantEvents(t *testing.T, partnerID, want string) {
	t.Helper()
	if got := strings.Join(w.events(t, partnerID), " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
}

func TestQuoteHoldsTheNameForItsPartner(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.list(t, "cheapflightsnow.com", 120_000)

	q, err := w.s.Quote(ctx, "prt_a", models.EnvSandbox, "CheapFlightsNow.com")
	if err != nil {
		t.Fatal(err)
	}
	if q.PriceCents != 120_000 || q.Domain != "cheapflightsnow.com" || !q.ExpiresAt.Equal(w.now.Add(10*time.Minute)) {
		t.Errorf("quote = %+v", q)
	}
	again, err := w.s.Quote(ctx, "prt_a", models.EnvSandbox, "cheapflightsnow.com")
	if err != nil || again.QuoteID != q.QuoteID {
		t.Errorf("the same partner again = %+v, %v; want its quote %s back", again, err, q.QuoteID)
	}
	_, err = w.s.Quote(ctx, "prt_b", models.EnvSandbox, "cheapflightsnow.com")
	if e := wantCode(t, "another partner's quote", err, fault.Conflict); !strings.Contains(e.Message, "reserved until") {
		t.Errorf("conflict message %q does not say until when", e.Message)
	}
	_, err = w.s.Record(ctx, "prt_b", models.EnvSandbox, newOrder("cheapflightsnow.com", 120_000, ""))
	wantCode(t, "another partner's order while held", err, fault.Conflict)

	claims, err := w.s.ParseQuoteToken(q.QuoteToken)
	if err != nil || claims.QuoteID != q.QuoteID || claims.PriceCents != 120_000 || claims.PartnerID != "prt_a" {
		t.Errorf("token claims = %+v, %v", claims, err)
	}
	tampered := q.QuoteToken[:len(q.QuoteToken)-2] + "xx"
	if _, err := w.s.ParseQuoteToken(tampered); !errors.Is(err, ErrBadQuoteToken) {
		t.Errorf("a tampered token = %v, want ErrBadQuoteToken", err)
	}

	// The window passes: the hold lapses by itself and the quote is expired.
	w.now = w.now.Add(10*time.Minute + time.Second)
	_, err = w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder("cheapflightsnow.com", 120_000, q.QuoteID))
	wantCode(t, "order with an expired quote", err, fault.QuoteExpired)
	if _, err := w.s.Quote(ctx, "prt_b", models.EnvSandbox, "cheapflightsnow.com"); err != nil {
		t.Errorf("another partner after the window: %v", err)
	}
	_, err = w.s.Quote(ctx, "prt_a", models.EnvLive, "cheapflightsnow.com")
	wantCode(t, "a sandbox name quoted live", err, fault.NotFound)
}

func TestRecordChecksInOrder(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.list(t, "sunsetyoga.io", 250_000)
	w.list(t, "soldname.com", 9_900)
	if _, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder("soldname.com", 9_900, "")); err != nil {
		t.Fatal(err)
	}
	other, err := w.s.Quote(ctx, "prt_b", models.EnvSandbox, "sunsetyoga.io")
	if err != nil {
		t.Fatal(err)
	}
	w.now = w.now.Add(11 * time.Minute) // prt_b's hold has lapsed

	bad := func(mut func(n *NewOrder)) NewOrder {
		n := newOrder("sunsetyoga.io", 250_000, "")
		mut(&n)
		return n
	}
	for _, tc := range []struct {
		name  string
		n     NewOrder
		code  fault.Code
		field string
	}{
		{"no price", bad(func(n *NewOrder) { n.ExpectedPrice = nil }), fault.Validation, "expected_price"},
		{"zero price", bad(func(n *NewOrder) { zero := int64(0); n.ExpectedPrice = &zero }), fault.Validation, "expected_price"},
		{"currency", bad(func(n *NewOrder) { n.Currency = "usd" }), fault.Validation, "currency"},
		{"no buyer", bad(func(n *NewOrder) { n.Buyer = nil }), fault.Validation, "buyer"},
		{"buyer email", bad(func(n *NewOrder) { n.Buyer.Email = "not-an-email" }), fault.Validation, "buyer.email"},
		{"buyer country", bad(func(n *NewOrder) { n.Buyer.Country = "XX" }), fault.Validation, "buyer.country"},
		{"buyer country EU", bad(func(n *NewOrder) { n.Buyer.Country = "EU" }), fault.Validation, "buyer.country"},
		{"no payment ref", bad(func(n *NewOrder) { n.ExternalPaymentRef = "" }), fault.Validation, "external_payment_ref"},
		{"return url", bad(func(n *NewOrder) { n.ReturnURL = "javascript:alert(1)" }), fault.Validation, "return_url"},
		{"bad domain", bad(func(n *NewOrder) { n.Domain = "not a domain" }), fault.Validation, "domain"},
		{"unlisted", bad(func(n *NewOrder) { n.Domain = "unlisted.com" }), fault.NotFound, ""},
		{"sold", bad(func(n *NewOrder) { n.Domain = "soldname.com"; *n.ExpectedPrice = 9_900 }), fault.Conflict, ""},
		{"unknown quote", bad(func(n *NewOrder) { n.QuoteID = "qt_nosuch" }), fault.Validation, "quote_id"},
		{"another partner's quote", bad(func(n *NewOrder) { n.QuoteID = other.QuoteID }), fault.Validation, "quote_id"},
		{"price", bad(func(n *NewOrder) { *n.ExpectedPrice = 249_999 }), fault.PriceMismatch, ""},
		{"currency differs", bad(func(n *NewOrder) { n.Currency = "EUR" }), fault.PriceMismatch, ""},
	} {
		_, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, tc.n)
		if e := wantCode(t, tc.name, err, tc.code); e.Field != tc.field {
			t.Errorf("%s: field %q, want %q", tc.name, e.Field, tc.field)
		}
	}
	var orders int64
	w.db.Model(&models.Order{}).Count(&orders)
	if orders != 1 {
		t.Errorf("%d orders after refusals, want the one sale", orders)
	}

	o, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder("sunsetyoga.io", 250_000, ""))
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != models.OrderExternallyPaid || o.Review != models.ReviewNone || o.Buyer.Email != "buyer@example.com" ||
		o.Buyer.Country != "NL" || o.PaymentModel != models.PaymentPartnerCollected || len(o.Timeline) != 1 ||
		o.Timeline[0].Event == nil || *o.Timeline[0].Event != EventRecorded {
		t.Errorf("order = %+v", o)
	}
	var l models.SandboxListing
	w.db.Take(&l, "domain = ?", "sunsetyoga.io")
	if l.SoldAt == nil {
		t.Error("the listing is not marked sold")
	}
	if got := w.events(t, "prt_a"); strings.Join(got, " ") != "order.recorded order.recorded" {
		t.Errorf("events = %v, want one order.recorded per sale", got)
	}
}

func TestAnOrderAtTheThresholdWaitsForReview(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.list(t, "premium.com", 500_000)
	o, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder("premium.com", 500_000, ""))
	if err != nil || o.Review != models.ReviewPending {
		t.Fatalf("order at the threshold = %+v, %v; want review pending", o, err)
	}
	_, err = w.s.Move(ctx, o.PublicID, StartTransfer, MoveInput{Recipient: "buyer-registrar"})
	if e := wantCode(t, "transfer before review", err, fault.Conflict); !strings.Contains(e.Message, "review") {
		t.Errorf("message %q", e.Message)
	}
	if o, err = w.s.Move(ctx, o.PublicID, ClearReview, MoveInput{}); err != nil || o.Review != models.ReviewCleared {
		t.Fatalf("clear review = %+v, %v", o, err)
	}
	if o, err = w.s.Move(ctx, o.PublicID, StartTransfer, MoveInput{Recipient: "buyer-registrar"}); err != nil || o.Status != models.OrderTransferInProgress {
		t.Fatalf("transfer after review = %+v, %v", o, err)
	}
	want := "order.recorded order.manual_review_cleared order.transfer_started"
	w.wantEvents(t, "prt_a", want)
}

// allowedMoves are the cells of status/review/action that move an order,
// written out by hand from the life of an order (not computed from
// Moves): the status after and the event. Every other cell is refused.
// start-transfer from TRANSFER_IN_PROGRESS is allowed only after a failed
// push (TestARefusedPushFailsAndOpsRetry), which these orders have not had.
var allowedMoves = map[string]string{
	"EXTERNALLY_PAID/pending/clear-review":          "EXTERNALLY_PAID order.manual_review_cleared",
	"EXTERNALLY_PAID/none/start-transfer":           "TRANSFER_IN_PROGRESS order.transfer_started",
	"EXTERNALLY_PAID/none/cancel":                   "CANCELLED order.refunded",
	"EXTERNALLY_PAID/pending/cancel":                "CANCELLED order.refunded",
	"PAID/pending/clear-review":                     "PAID order.manual_review_cleared",
	"PAID/none/start-transfer":                      "TRANSFER_IN_PROGRESS order.transfer_started",
	"PAID/none/cancel":                              "CANCELLED order.refunded",
	"PAID/pending/cancel":                           "CANCELLED order.refunded",
	"TRANSFER_IN_PROGRESS/none/confirm-delivery":    "TRANSFER_COMPLETED order.transfer_completed",
	"TRANSFER_IN_PROGRESS/pending/confirm-delivery": "TRANSFER_COMPLETED order.transfer_completed",
	"TRANSFER_IN_PROGRESS/none/cancel":              "CANCELLED order.refunded",
	"TRANSFER_IN_PROGRESS/pending/cancel":           "CANCELLED order.refunded",
}

// TestEveryCellOfTheMoveTable tries every action from every status, with
// the review held and not, against allowedMoves.
func TestEveryCellOfTheMoveTable(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	statusList := []string{models.OrderExternallyPaid, models.OrderPaid, models.OrderTransferInProgress, models.OrderTransferCompleted,
		models.OrderSettled, models.OrderRefunded, models.OrderCancelled}
	actions := []Action{ClearReview, StartTransfer, ConfirmDelivery, Cancel}
	n := 0
	for _, status := range statusList {
		for _, review := range []string{models.ReviewNone, models.ReviewPending} {
			for _, action := range actions {
				n++
				domain := "cell" + strings.Repeat("x", n%7) + string(rune('a'+n%26)) + string(rune('a'+n/26)) + ".com"
				id := w.list(t, domain, 1000)
				o := models.Order{PublicID: "ord_cell_" + domain, PartnerID: "prt_a", Environment: models.EnvSandbox, ListingID: id,
					Domain: domain, Status: status, Review: review, SalePriceCents: 1000, Currency: "USD",
					PaymentModel: models.PaymentPartnerCollected, BuyerEmail: "b@example.com", BuyerName: "B", BuyerCountry: "NL",
					ExternalPaymentRef: "x", CreatedAt: w.now, UpdatedAt: w.now}
				o.CommissionBPS, o.CommissionCents = 1500, 150
				w.db.Create(&o)
				ref := ledgerRef(o, ledger.KindSale)
				if err := ledger.Post(w.db, ref, w.now, ledger.Sale(o.PaymentModel, o.SalePriceCents, o.CommissionCents)...); err != nil {
					t.Fatal(err)
				}
				w.db.Model(&models.SandboxListing{}).Where("id = ?", id).Update("sold_at", w.now)

				got, err := w.s.Move(ctx, o.PublicID, action, MoveInput{Recipient: "buyer-registrar"})
				cell := status + "/" + review + "/" + string(action)
				want, allowed := allowedMoves[cell]
				if !allowed {
					wantCode(t, cell, err, fault.Conflict)
					var after models.Order
					w.db.Take(&after, "public_id = ?", o.PublicID)
					if after.Status != status || after.Review != review {
						t.Errorf("%s: refused, but the order became %s/%s", cell, after.Status, after.Review)
					}
					continue
				}
				wantStatus, wantEvent, _ := strings.Cut(want, " ")
				if err != nil || got.Status != wantStatus {
					t.Errorf("%s = %+v, %v; want %s", cell, got, err, wantStatus)
					continue
				}
				last := got.Timeline[len(got.Timeline)-1]
				if last.Event == nil || *last.Event != wantEvent || last.Actor != ActorOps {
					t.Errorf("%s: last step %+v, want %s by ops", cell, last, wantEvent)
				}
				var l models.SandboxListing
				w.db.Take(&l, "id = ?", id)
				if (action == Cancel) != (l.SoldAt == nil) {
					t.Errorf("%s: listing sold_at %v", cell, l.SoldAt)
				}
				if action == ConfirmDelivery && got.TransferCompletedAt == nil {
					t.Errorf("%s: no transfer_completed_at", cell)
				}
				if action == Cancel && got.RefundedCents != got.SalePriceCents {
					t.Errorf("%s: refunded %d of %d", cell, got.RefundedCents, got.SalePriceCents)
				}
			}
		}
	}
	_, err := w.s.Move(ctx, "ord_nosuch", Cancel, MoveInput{})
	wantCode(t, "unknown order", err, fault.NotFound)
}

func TestRefunds(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.list(t, "refundme.com", 10_000)
	o, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder("refundme.com", 10_000, ""))
	if err != nil {
		t.Fatal(err)
	}
	part := int64(4_000)
	r, err := w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: o.PublicID, Reason: "buyer changed the plan", AmountCents: &part})
	if err != nil || r.OrderStatus != models.OrderExternallyPaid || r.AmountCents != 4_000 {
		t.Fatalf("partial refund = %+v, %v", r, err)
	}
	too := int64(6_001)
	_, err = w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: o.PublicID, Reason: "more", AmountCents: &too})
	wantCode(t, "refund beyond the rest", err, fault.Validation)
	_, err = w.s.Refund(ctx, "prt_b", models.EnvSandbox, NewRefund{OrderID: o.PublicID, Reason: "not mine"})
	wantCode(t, "another partner's order", err, fault.NotFound)
	r, err = w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: o.PublicID, Reason: "the rest"})
	if err != nil || r.OrderStatus != models.OrderRefunded || r.AmountCents != 6_000 {
		t.Fatalf("refund of the rest = %+v, %v", r, err)
	}
	var l models.SandboxListing
	w.db.Take(&l, "domain = ?", "refundme.com")
	if l.SoldAt != nil {
		t.Error("the refunded name is not back on sale")
	}
	if _, err := w.s.Record(ctx, "prt_b", models.EnvSandbox, newOrder("refundme.com", 10_000, "")); err != nil {
		t.Errorf("buying the name back on sale: %v", err)
	}

	// After the transfer completed, no refund.
	w.list(t, "delivered.com", 10_000)
	d, _ := w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder("delivered.com", 10_000, ""))
	w.s.Move(ctx, d.PublicID, StartTransfer, MoveInput{Recipient: "buyer-registrar"})
	w.s.Move(ctx, d.PublicID, ConfirmDelivery, MoveInput{})
	_, err = w.s.Refund(ctx, "prt_a", models.EnvSandbox, NewRefund{OrderID: d.PublicID, Reason: "too late"})
	if e := wantCode(t, "refund after delivery", err, fault.Conflict); !strings.Contains(e.Message, "TRANSFER_COMPLETED") {
		t.Errorf("message %q does not say why", e.Message)
	}
	want := "order.recorded order.partially_refunded order.refunded order.recorded order.transfer_started order.transfer_completed"
	w.wantEvents(t, "prt_a", want)
}

// TestConcurrentOrdersForOneName: of many partners ordering one name at
// once, exactly one gets it.
func TestConcurrentOrdersForOneName(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.list(t, "contested.com", 50_000)
	var mu sync.Mutex
	var won, lost int
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := w.s.Record(ctx, "prt_"+string(rune('a'+i)), models.EnvSandbox, newOrder("contested.com", 50_000, ""))
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				won++
			} else if e, ok := fault.As(err); ok && e.Code == fault.Conflict {
				lost++
			} else {
				t.Errorf("order: %v", err)
			}
		}()
	}
	wg.Wait()
	var orders, events int64
	w.db.Model(&models.Order{}).Count(&orders)
	w.db.Model(&models.Event{}).Count(&events)
	if won != 1 || lost != 7 || orders != 1 || events != 1 {
		t.Errorf("%d won, %d lost, %d orders, %d events; want exactly one sale with its event", won, lost, orders, events)
	}
}

func TestListPagesNewestFirst(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	var want []string
	for i := range 7 {
		d := "page" + string(rune('a'+i)) + ".com"
		w.list(t, d, 1000)
		o, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder(d, 1000, ""))
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{o.PublicID}, want...)
		w.now = w.now.Add(time.Second)
	}
	w.list(t, "otherpartner.com", 1000)
	w.s.Record(ctx, "prt_b", models.EnvSandbox, newOrder("otherpartner.com", 1000, ""))

	var got []string
	cursor := ""
	for range 5 {
		page, next, err := w.s.List(ctx, Filter{PartnerID: "prt_a", Environment: models.EnvSandbox, Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page {
			got = append(got, o.PublicID)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("walked %v, want %v", got, want)
	}
	from := w.now.Add(-3 * time.Second)
	page, _, err := w.s.List(ctx, Filter{PartnerID: "prt_a", Environment: models.EnvSandbox, From: &from})
	if err != nil || len(page) != 3 {
		t.Errorf("orders from %v: %d, %v; want the last 3", from, len(page), err)
	}
	_, _, err = w.s.List(ctx, Filter{PartnerID: "prt_a", Environment: models.EnvSandbox, Status: models.OrderPaid, Cursor: "garbage"})
	wantCode(t, "a bad cursor", err, fault.InvalidCursor)
	_, _, err = w.s.List(ctx, Filter{PartnerID: "prt_a", Environment: models.EnvSandbox, Status: "LOST"})
	wantCode(t, "an unknown status", err, fault.Validation)
}

// TestNoOrderWithoutItsEvent: when writing the event fails after the order
// row was written (a crash between them, as far as the transaction can
// tell), neither stays, and the name stays on sale; a move likewise.
func TestNoOrderWithoutItsEvent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.list(t, "atomic.com", 10_000)
	ok, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder("atomic.com", 10_000, ""))
	if err != nil {
		t.Fatal(err)
	}
	w.list(t, "broken.com", 10_000)

	const crash = "the process died here"
	restore := failInserts(t, w.db, "events", crash)
	_, err = w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder("broken.com", 10_000, ""))
	if err == nil || !strings.Contains(err.Error(), crash) {
		t.Fatalf("record with the event failing = %v", err)
	}
	_, err = w.s.Move(ctx, ok.PublicID, StartTransfer, MoveInput{Recipient: "buyer-registrar"})
	if err == nil || !strings.Contains(err.Error(), crash) {
		t.Fatalf("move with the event failing = %v", err)
	}
	restore()

	var orders, steps int64
	w.db.Model(&models.Order{}).Count(&orders)
	w.db.Model(&models.OrderStep{}).Count(&steps)
	var l models.SandboxListing
	w.db.Take(&l, "domain = ?", "broken.com")
	var moved models.Order
	w.db.Take(&moved, "public_id = ?", ok.PublicID)
	if orders != 1 || steps != 1 || l.SoldAt != nil || moved.Status != models.OrderExternallyPaid {
		t.Errorf("after the failures: %d orders, %d steps, broken.com sold at %v, first order %s; want only the first order, unmoved",
			orders, steps, l.SoldAt, moved.Status)
	}
}

// TestAMoveThatCannotAnswerIsNotMade: a move whose answer cannot be
// read (the database failing after its writes) is not made, so that the
// retry its error calls for is the only move: a cancel refunds once and a
// start-transfer queues one push.
func TestAMoveThatCannotAnswerIsNotMade(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	down := errors.New("the database went away")
	pushes := func() (n int64) {
		w.db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypeTransferPush).Count(&n)
		return n
	}
	for _, action := range []Action{StartTransfer, Cancel} {
		domain := "retry-" + string(action) + ".com"
		w.list(t, domain, 10_000)
		o, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder(domain, 10_000, ""))
		if err != nil {
			t.Fatal(err)
		}
		in := MoveInput{Recipient: "buyer-registrar"}
		pushed := pushes()
		restore := modelstest.FailReads(t, w.db, "order_steps", down)
		if _, err := w.s.Move(ctx, o.PublicID, action, in); !errors.Is(err, down) {
			t.Fatalf("%s with the timeline's read failing = %v, want its error", action, err)
		}
		restore()
		var after models.Order
		w.db.Take(&after, "public_id = ?", o.PublicID)
		var steps, refunds int64
		w.db.Model(&models.OrderStep{}).Where("order_id = ?", o.PublicID).Count(&steps)
		w.db.Model(&models.Refund{}).Where("order_id = ?", o.PublicID).Count(&refunds)
		if after.Status != models.OrderExternallyPaid || after.RefundedCents != 0 || steps != 1 || refunds != 0 || pushes() != pushed {
			t.Errorf("after the failed %s: order %s refunded %d, %d steps, %d refunds, %d pushes queued; want it unmoved",
				action, after.Status, after.RefundedCents, steps, refunds, pushes()-pushed)
		}

		v, err := w.s.Move(ctx, o.PublicID, action, in)
		if err != nil {
			t.Fatalf("%s retried: %v", action, err)
		}
		w.db.Model(&models.Refund{}).Where("order_id = ?", o.PublicID).Count(&refunds)
		want := map[Action]struct{ refunds, pushes int64 }{StartTransfer: {0, 1}, Cancel: {1, 0}}[action]
		if len(v.Timeline) != 2 || refunds != want.refunds || pushes()-pushed != want.pushes {
			t.Errorf("%s retried: timeline of %d steps, %d refunds, %d pushes queued; want 2 steps, %d refunds, %d pushes",
				action, len(v.Timeline), refunds, pushes()-pushed, want.refunds, want.pushes)
		}
	}
}

// failInserts makes every insert into table fail with message, in the
// database itself (a trigger), so that it fails however the rows are
// written; the func returned removes it.
func failInserts(t *testing.T, db *gorm.DB, table, message string) (restore func()) {
	t.Helper()
	create := []string{`CREATE TRIGGER fail_inserts BEFORE INSERT ON ` + table + ` BEGIN SELECT RAISE(ABORT, '` + message + `'); END`}
	drop := []string{`DROP TRIGGER fail_inserts`}
	if models.IsPostgres(db) {
		create = []string{
			`CREATE FUNCTION fail_inserts() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '` + message + `'; END $$`,
			`CREATE TRIGGER fail_inserts BEFORE INSERT ON ` + table + ` FOR EACH ROW EXECUTE FUNCTION fail_inserts()`,
		}
		drop = []string{`DROP TRIGGER fail_inserts ON ` + table, `DROP FUNCTION fail_inserts()`}
	}
	for _, q := range create {
		if err := db.Exec(q).Error; err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		for _, q := range drop {
			if err := db.Exec(q).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Record answers with the order as later reads see it, without reading it
// back: its times as the database keeps them, and its timeline the one
// step written. The new order's first delivery has its task at once, and
// the next event of the order waits behind it.
func TestARecordedOrderIsAsReadLater(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.now = w.now.Add(123_456_789 * time.Nanosecond)
	w.list(t, "atomic.com", 10_000)
	endpoint := models.WebhookEndpoint{ID: "whe_a", PartnerID: "prt_a", Environment: models.EnvSandbox, URL: "https://shop.test/hooks",
		SecretSealed: []byte("sealed"), Active: true, CreatedAt: w.now}
	if err := w.db.Create(&endpoint).Error; err != nil {
		t.Fatal(err)
	}

	recorded, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder("atomic.com", 10_000, ""))
	if err != nil {
		t.Fatal(err)
	}
	read, err := w.s.Get(ctx, "prt_a", models.EnvSandbox, recorded.PublicID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(recorded, read) {
		t.Errorf("Record answered\n%+v\nand a read then gives\n%+v", recorded, read)
	}

	if _, err := w.s.Move(ctx, recorded.PublicID, StartTransfer, MoveInput{Recipient: "buyer-registrar"}); err != nil {
		t.Fatal(err)
	}
	var ds []models.WebhookDelivery
	w.db.Where("subject = ?", recorded.PublicID).Order("event_seq").Find(&ds)
	var entries []models.OutboxEntry
	w.db.Where("task_type = ?", tasks.TypeWebhookDeliver).Find(&entries)
	tasked := map[string]int{}
	for _, e := range entries {
		var p tasks.WebhookDeliverPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		tasked[p.DeliveryID]++
	}
	if len(ds) != 2 || tasked[ds[0].ID] != 1 || !ds[0].Followed || tasked[ds[1].ID] != 0 {
		t.Errorf("deliveries of the order = %+v, tasks %v; want the first with its task and followed, the second waiting without one", ds, tasked)
	}
}

// A live sale takes only a listing the marketplace shows, and hides it;
// one not approved, or withdrawn, is not found, and a sold one is sold.
func TestALiveSaleTakesWhatTheMarketplaceShows(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	price := int64(5_000)
	for _, l := range []models.Listing{
		{Domain: "shown.com", Approved: true, MarketplaceVisible: true},
		{Domain: "unapproved.com", Approved: false, MarketplaceVisible: true},
		{Domain: "withdrawn.com", Approved: true, MarketplaceVisible: false},
	} {
		l.ID, l.TLD, l.BINCents, l.Currency, l.CreatedAt = models.NewID(), "com", &price, "USD", w.now
		if err := w.db.Create(&l).Error; err != nil {
			t.Fatal(err)
		}
	}
	for _, domain := range []string{"unapproved.com", "withdrawn.com"} {
		_, err := w.s.Record(ctx, "prt_a", models.EnvLive, newOrder(domain, price, ""))
		wantCode(t, domain, err, fault.NotFound)
	}
	if _, err := w.s.Record(ctx, "prt_a", models.EnvLive, newOrder("shown.com", price, "")); err != nil {
		t.Fatal(err)
	}
	var sold models.Listing
	w.db.Take(&sold, "domain = ?", "shown.com")
	if sold.SoldAt == nil || sold.MarketplaceVisible || sold.LockedUntil != nil {
		t.Errorf("the listing sold = %+v, want sold and hidden", sold)
	}
	_, err := w.s.Record(ctx, "prt_b", models.EnvLive, newOrder("shown.com", price, ""))
	if e := wantCode(t, "the name sold", err, fault.Conflict); !strings.Contains(e.Message, "is sold") {
		t.Errorf("conflict = %q, want it to say the name is sold", e.Message)
	}
}
