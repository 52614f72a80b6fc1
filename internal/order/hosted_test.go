package order

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// session stores a checkout session of partnerID for domain.
func (w *world) session(t *testing.T, partnerID, domain string) models.CheckoutSession {
	t.Helper()
	cs := models.CheckoutSession{ID: "cs_" + models.NewID()[:8], PartnerID: partnerID, Environment: models.EnvSandbox, Domain: domain,
		ReturnURL: "https://shop.test/thanks", CancelURL: "https://shop.test/", ExpiresAt: w.now.Add(7 * 24 * time.Hour), CreatedAt: w.now}
	if err := w.db.Create(&cs).Error; err != nil {
		t.Fatal(err)
	}
	return cs
}

func hostedPayment(cs models.CheckoutSession, price int64) HostedPayment {
	return HostedPayment{Session: cs, Provider: "sandbox", PriceCents: price, Currency: "USD",
		Buyer: Buyer{Email: " Ada@Example.com", Name: "Ada Buyer", Country: "nl"}, ChargeID: "ch_test_1", CardLast4: "4242"}
}

// reserved is a payment of cs at price, reserved (its name held for cs
// and its payment row written) and charged by the sandbox processor.
func (w *world) reserved(t *testing.T, cs models.CheckoutSession, price int64) HostedPayment {
	t.Helper()
	p := hostedPayment(cs, price)
	ctx := context.Background()
	if err := w.s.ReserveHosted(ctx, &p); err != nil {
		t.Fatalf("reserve %s: %v", cs.Domain, err)
	}
	var err error
	p.ChargeID, err = payment.NewSandbox(w.db, payment.SandboxOptions{}).Charge(ctx, payment.Charge{AmountCents: price, Currency: "USD",
		Card: payment.Card{Number: payment.TestCardPays, ExpMonth: 12, ExpYear: 2030, CVC: "123", Name: "Ada"}, IdempotencyKey: p.Payment.IdempotencyKey})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The hosted checkout sells by the rules of any order: the offer, the
// checks before the charge, the hold, and one order per session.
func TestHostedCheckoutSellsOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.list(t, "cheapflightsnow.com", 120_000)
	offerOnly := w.list(t, "byoffer.com", 1)
	w.db.Model(&models.SandboxListing{}).Where("id = ?", offerOnly).Update("bin_cents", nil)

	o, err := w.s.Offer(ctx, "prt_a", "", models.EnvSandbox, "CheapFlightsNow.com")
	if err != nil || o.Domain != "cheapflightsnow.com" || o.PriceCents != 120_000 || o.Currency != "USD" || o.ListingID == "" {
		t.Fatalf("offer = %+v, %v", o, err)
	}
	_, err = w.s.Offer(ctx, "prt_a", "", models.EnvLive, "cheapflightsnow.com")
	wantCode(t, "a sandbox name offered live", err, fault.NotFound)
	_, err = w.s.Offer(ctx, "prt_a", "", models.EnvSandbox, "byoffer.com")
	wantCode(t, "a name sold by offer only", err, fault.Conflict)

	cs := w.session(t, "prt_a", "cheapflightsnow.com")
	bad := hostedPayment(cs, 120_000)
	bad.Buyer.Email = "not an email"
	if e := wantCode(t, "a bad email", w.s.ReserveHosted(ctx, &bad), fault.Validation); e.Field != "email" {
		t.Errorf("field = %q, want email", e.Field)
	}
	stale := hostedPayment(cs, 99_000)
	wantCode(t, "a price the page no longer has", w.s.ReserveHosted(ctx, &stale), fault.PriceMismatch)

	p := w.reserved(t, cs, 120_000)
	if p.Buyer.Email != "ada@example.com" || p.Buyer.Country != "NL" {
		t.Errorf("buyer = %+v, want it normalised", p.Buyer)
	}
	_, err = w.s.Quote(ctx, "prt_b", models.EnvSandbox, "cheapflightsnow.com")
	wantCode(t, "another partner's quote while the charge runs", err, fault.Conflict)

	v, err := w.s.RecordHosted(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != models.OrderPaid || v.PaymentModel != models.PaymentHosted || v.ExternalPaymentRef != p.ChargeID || v.Review != models.ReviewNone ||
		v.SalePriceCents != 120_000 || v.Buyer.Email != "ada@example.com" || len(v.Timeline) != 1 || v.Timeline[0].Actor != ActorBuyer ||
		v.Timeline[0].Event == nil || *v.Timeline[0].Event != EventPaid {
		t.Errorf("order = %+v", v)
	}
	var stored models.CheckoutSession
	w.db.Take(&stored, "id = ?", cs.ID)
	if stored.OrderID == nil || *stored.OrderID != v.PublicID || stored.ChargeID != p.ChargeID || stored.CardLast4 != "4242" || stored.PaidAt == nil {
		t.Errorf("session after payment = %+v", stored)
	}

	again, err := w.s.RecordHosted(ctx, p)
	if err != nil || again.PublicID != v.PublicID {
		t.Errorf("the session paid again = %s, %v; want its order %s", again.PublicID, err, v.PublicID)
	}
	if got := w.events(t, "prt_a"); len(got) != 1 || got[0] != EventPaid {
		t.Errorf("events = %v, want one order.paid", got)
	}
	_, err = w.s.Offer(ctx, "prt_a", "", models.EnvSandbox, "cheapflightsnow.com")
	wantCode(t, "the name once sold", err, fault.Conflict)
	var pay models.Payment
	w.db.Take(&pay, "id = ?", p.Payment.ID)
	if pay.Status != models.PaymentSucceeded || pay.OrderID == nil || *pay.OrderID != v.PublicID || pay.ChargeID == nil ||
		*pay.ChargeID != p.ChargeID || pay.AmountCents != 120_000 || pay.SessionID != cs.ID || pay.IdempotencyKey != pay.ID {
		t.Errorf("the payment after the order = %+v", pay)
	}
}

// Payments of one session racing each other (two tabs) make one order.
func TestConcurrentHostedPaymentsMakeOneOrder(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.list(t, "contested.com", 600_000)
	cs := w.session(t, "prt_a", "contested.com")
	p := w.reserved(t, cs, 600_000)
	var mu sync.Mutex
	ids := map[string]bool{}
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := w.s.RecordHosted(ctx, p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("payment: %v", err)
				return
			}
			ids[v.PublicID] = true
			if v.Review != models.ReviewPending {
				t.Errorf("review = %q, want pending at or above the threshold", v.Review)
			}
		}()
	}
	wg.Wait()
	var orders, events int64
	w.db.Model(&models.Order{}).Count(&orders)
	w.db.Model(&models.Event{}).Count(&events)
	if len(ids) != 1 || orders != 1 || events != 1 {
		t.Errorf("%d order ids answered, %d orders, %d events; want one order with its event", len(ids), orders, events)
	}
}

// While a session pays for a name, the session holds it: another session
// of the same partner, the partner's quote and its own order are refused
// until the payment ends, and the session's own retry is not.
func TestASessionHoldsTheNameWhileItPays(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.list(t, "onebuyer.com", 30_000)
	first, second := w.session(t, "prt_a", "onebuyer.com"), w.session(t, "prt_a", "onebuyer.com")
	p := w.reserved(t, first, 30_000)

	other := hostedPayment(second, 30_000)
	wantCode(t, "another session of the partner", w.s.ReserveHosted(ctx, &other), fault.Conflict)
	_, err := w.s.Record(ctx, "prt_a", models.EnvSandbox, newOrder("onebuyer.com", 30_000, ""))
	wantCode(t, "the partner's own order", err, fault.Conflict)
	_, err = w.s.Quote(ctx, "prt_a", models.EnvSandbox, "onebuyer.com")
	wantCode(t, "the partner's quote", err, fault.Conflict)
	_, err = w.s.Offer(ctx, "prt_a", second.ID, models.EnvSandbox, "onebuyer.com")
	wantCode(t, "the other session's page", err, fault.Conflict)
	if _, err := w.s.Offer(ctx, "prt_a", first.ID, models.EnvSandbox, "onebuyer.com"); err != nil {
		t.Errorf("the paying session's own page: %v", err)
	}

	retry := hostedPayment(first, 30_000) // another tab of the paying session
	if err := w.s.ReserveHosted(ctx, &retry); err != nil {
		t.Fatalf("the paying session again: %v", err)
	}
	if retry.Payment.ID != p.Payment.ID {
		t.Errorf("the second tab's payment %s, want the pending %s (one idempotency key, one charge)", retry.Payment.ID, p.Payment.ID)
	}
	v, err := w.s.RecordHosted(ctx, p)
	if err != nil || v.Status != models.OrderPaid {
		t.Fatalf("the paying session's order = %+v, %v", v, err)
	}
}

// A charge that cannot become an order (here the seller changed the
// price while the card was charged) is recorded as charged, without an
// order, with its return queued in the same transaction; the session's
// hold ends and the name stays for sale.
func TestAChargeWithoutItsOrderIsGivenBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	id := w.list(t, "gone.com", 30_000)
	cs := w.session(t, "prt_a", "gone.com")
	p := w.reserved(t, cs, 30_000)
	w.db.Model(&models.SandboxListing{}).Where("id = ?", id).Update("bin_cents", 31_000)

	_, err := w.s.RecordHosted(ctx, p)
	wantCode(t, "recording at a price that moved", err, fault.PriceMismatch)
	if err := w.s.Unrecorded(ctx, p, err); err != nil {
		t.Fatal(err)
	}
	if err := w.s.Unrecorded(ctx, p, err); err != nil { // again: nothing more
		t.Fatal(err)
	}
	var pay models.Payment
	w.db.Take(&pay, "id = ?", p.Payment.ID)
	if pay.Status != models.PaymentSucceeded || pay.OrderID != nil || pay.ChargeID == nil || *pay.ChargeID != p.ChargeID ||
		!strings.Contains(pay.Note, "refunded in full") {
		t.Errorf("the payment without an order = %+v", pay)
	}
	var returns []models.OutboxEntry
	w.db.Where("task_type = ?", tasks.TypePaymentReturn).Find(&returns)
	if len(returns) != 1 || !strings.Contains(string(returns[0].Payload), p.Payment.ID) {
		t.Errorf("payment:return tasks = %+v, want one for %s", returns, p.Payment.ID)
	}
	var l models.SandboxListing
	w.db.Take(&l, "id = ?", id)
	if l.HeldSession != nil || l.LockedUntil != nil || l.SoldAt != nil {
		t.Errorf("the name after the failed payment: held by %v until %v, sold at %v; want it free", l.HeldSession, l.LockedUntil, l.SoldAt)
	}
	var orders int64
	w.db.Model(&models.Order{}).Count(&orders)
	if orders != 0 {
		t.Errorf("%d orders, want none", orders)
	}
}

// A page that expires releases the name only if its payment was still
// pending: one settled meanwhile (here failed by another path while the
// session kept its hold) leaves the hold as it was.
func TestAbandonedReleasesOnlyWhatItDeclined(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	id := w.list(t, "stillheld.com", 30_000)
	cs := w.session(t, "prt_a", "stillheld.com")
	p := w.reserved(t, cs, 30_000)
	w.db.Model(&models.Payment{}).Where("id = ?", p.Payment.ID).Updates(map[string]any{"status": models.PaymentFailed, "note": "refused"})

	if declined, err := w.s.Abandoned(ctx, p.Payment, "its page expired"); err != nil || declined {
		t.Fatalf("abandoning a payment no longer pending = %v, %v; want nothing declined", declined, err)
	}
	var l models.SandboxListing
	w.db.Take(&l, "id = ?", id)
	if l.HeldSession == nil || *l.HeldSession != cs.ID || l.LockedUntil == nil {
		t.Errorf("after abandoning a payment no longer pending: held by %v until %v, want %s's hold kept", l.HeldSession, l.LockedUntil, cs.ID)
	}
	var pay models.Payment
	w.db.Take(&pay, "id = ?", p.Payment.ID)
	if pay.Note != "refused" {
		t.Errorf("the payment's note = %q, want the first outcome's kept", pay.Note)
	}

	w.list(t, "expired.com", 30_000)
	other := w.reserved(t, w.session(t, "prt_a", "expired.com"), 30_000)
	if declined, err := w.s.Abandoned(ctx, other.Payment, "its page expired"); err != nil || !declined {
		t.Fatalf("abandoning a pending payment = %v, %v; want it declined", declined, err)
	}
	var failed models.Payment
	w.db.Take(&failed, "id = ?", other.Payment.ID)
	var freed models.SandboxListing
	w.db.Take(&freed, "domain = ?", "expired.com")
	if failed.Status != models.PaymentFailed || freed.HeldSession != nil || freed.LockedUntil != nil {
		t.Errorf("a pending payment abandoned: status %s, the name held by %v until %v; want failed and free", failed.Status, freed.HeldSession, freed.LockedUntil)
	}
}
