package order

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
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
	return HostedPayment{Session: cs, PriceCents: price, Currency: "USD",
		Buyer: Buyer{Email: " Ada@Example.com", Name: "Ada Buyer", Country: "nl"}, ChargeID: "ch_test_1", CardLast4: "4242"}
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

	o, err := w.s.Offer(ctx, "prt_a", models.EnvSandbox, "CheapFlightsNow.com")
	if err != nil || o.Domain != "cheapflightsnow.com" || o.PriceCents != 120_000 || o.Currency != "USD" || o.ListingID == "" {
		t.Fatalf("offer = %+v, %v", o, err)
	}
	_, err = w.s.Offer(ctx, "prt_a", models.EnvLive, "cheapflightsnow.com")
	wantCode(t, "a sandbox name offered live", err, fault.NotFound)
	_, err = w.s.Offer(ctx, "prt_a", models.EnvSandbox, "byoffer.com")
	wantCode(t, "a name sold by offer only", err, fault.Conflict)

	cs := w.session(t, "prt_a", "cheapflightsnow.com")
	bad := hostedPayment(cs, 120_000)
	bad.Buyer.Email = "not an email"
	if e := wantCode(t, "a bad email", w.s.ReserveHosted(ctx, &bad), fault.Validation); e.Field != "email" {
		t.Errorf("field = %q, want email", e.Field)
	}
	stale := hostedPayment(cs, 99_000)
	wantCode(t, "a price the page no longer has", w.s.ReserveHosted(ctx, &stale), fault.PriceMismatch)

	p := hostedPayment(cs, 120_000)
	if err := w.s.ReserveHosted(ctx, &p); err != nil {
		t.Fatal(err)
	}
	if p.Buyer.Email != "ada@example.com" || p.Buyer.Country != "NL" {
		t.Errorf("buyer = %+v, want it normalised", p.Buyer)
	}
	_, err = w.s.Quote(ctx, "prt_b", models.EnvSandbox, "cheapflightsnow.com")
	wantCode(t, "another partner's quote while the charge runs", err, fault.Conflict)

	v, err := w.s.RecordHosted(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != models.OrderPaid || v.PaymentModel != models.PaymentHosted || v.ExternalPaymentRef != "ch_test_1" || v.Review != models.ReviewNone ||
		v.SalePriceCents != 120_000 || v.Buyer.Email != "ada@example.com" || len(v.Timeline) != 1 || v.Timeline[0].Actor != ActorBuyer ||
		v.Timeline[0].Event == nil || *v.Timeline[0].Event != EventPaid {
		t.Errorf("order = %+v", v)
	}
	var stored models.CheckoutSession
	w.db.Take(&stored, "id = ?", cs.ID)
	if stored.OrderID == nil || *stored.OrderID != v.PublicID || stored.ChargeID != "ch_test_1" || stored.CardLast4 != "4242" || stored.PaidAt == nil {
		t.Errorf("session after payment = %+v", stored)
	}

	again, err := w.s.RecordHosted(ctx, p)
	if err != nil || again.PublicID != v.PublicID {
		t.Errorf("the session paid again = %s, %v; want its order %s", again.PublicID, err, v.PublicID)
	}
	if got := w.events(t, "prt_a"); len(got) != 1 || got[0] != EventPaid {
		t.Errorf("events = %v, want one order.paid", got)
	}
	_, err = w.s.Offer(ctx, "prt_a", models.EnvSandbox, "cheapflightsnow.com")
	wantCode(t, "the name once sold", err, fault.Conflict)
}

// Payments of one session racing each other (two tabs) make one order.
func TestConcurrentHostedPaymentsMakeOneOrder(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.list(t, "contested.com", 600_000)
	cs := w.session(t, "prt_a", "contested.com")
	var mu sync.Mutex
	ids := map[string]bool{}
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := w.s.RecordHosted(ctx, hostedPayment(cs, 600_000))
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
