package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/payment/stripepay/stripepaytest"
	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/partnerclient"
	"github.com/domaind/domaind/worker"
)

// stripeServed is a served env whose live checkout takes its payments on
// Stripe's page (Stripe's API mock answering for Stripe), with a worker
// acting on Stripe's notices and giving charges back. It returns the
// mock's URL.
func stripeServed(t *testing.T) (*testEnv, *httptest.Server, string) {
	t.Helper()
	mock := testtool.StripeMock(t)
	srv := httptest.NewServer(nil)
	t.Cleanup(srv.Close)
	env := newTestEnv(t, func(c *config.Config) {
		c.BaseURL = mustURL(t, srv.URL)
		c.PaymentProvider, c.StripeSecretKey, c.StripeWebhookSecret, c.StripeAPIURL = "stripe", stripepaytest.Key, stripepaytest.WebhookSecret, mock
	})
	srv.Config.Handler = env.checkedHandler()
	svc := env.srv.svc
	startWorker(t, env, worker.Deps{Orders: svc.Orders, Payments: svc.Processors, PaymentBook: svc.Payments, Checkout: svc.Checkout})
	return env, srv, mock
}

// listLive puts domain in the live inventory at binCents.
func listLive(t *testing.T, env *testEnv, domain string, binCents int64) {
	t.Helper()
	l := models.Listing{ID: models.NewID(), Domain: domain, TLD: domain[strings.LastIndexByte(domain, '.')+1:], BINCents: &binCents,
		Currency: "USD", Approved: true, MarketplaceVisible: true, CreatedAt: env.now}
	if err := env.db.Create(&l).Error; err != nil {
		t.Fatal(err)
	}
}

// liveSession opens a live checkout of domain for c, returning to shop.
func liveSession(t *testing.T, c *partnerclient.Client, domain, shop string) string {
	t.Helper()
	var s struct {
		CheckoutURL string `json:"checkout_url"`
	}
	if err := c.PostJSON(context.Background(), "/api/partner/v1/checkout-session", map[string]string{"domain": domain,
		"return_url": shop + "/return", "cancel_url": shop + "/cancel", "buyer_email": "ada@example.com"}, &s); err != nil {
		t.Fatalf("checkout session of %s: %v", domain, err)
	}
	return s.CheckoutURL
}

// notify posts payload to the Stripe webhook endpoint with header as its
// Stripe-Signature, and returns the status and the answer.
func notify(t *testing.T, base string, payload []byte, header string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+StripeWebhookPath, bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	if header != "" {
		req.Header.Set("Stripe-Signature", header)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(body, &out)
	return res.StatusCode, out
}

// signedNow signs payload as Stripe does, now.
func signedNow(payload []byte) string {
	return stripepaytest.Sign(payload, stripepaytest.WebhookSecret, time.Now())
}

// payOnStripe submits the checkout page of link, for domain, as a buyer
// does in Stripe mode, and returns where it sends the buyer and the
// payment it made.
func payOnStripe(t *testing.T, env *testEnv, base, link, domain string) (string, models.Payment) {
	t.Helper()
	client, form := checkoutBuyer(t, link)
	for _, card := range []string{"card_number", "expiry", "cvc"} {
		form.Del(card) // the page has no card field
	}
	res, err := client.PostForm(base+"/checkout", form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var p models.Payment
	if err := env.db.Order("created_at DESC").Take(&p, "domain = ? AND provider = ?", domain, "stripe").Error; err != nil {
		t.Fatalf("the payment of %s (the form answered %d): %v", domain, res.StatusCode, err)
	}
	return res.Header.Get("Location"), p
}

// waitPayment waits until payment id is in status, and returns it.
func waitPayment(t *testing.T, env *testEnv, id, status string) models.Payment {
	t.Helper()
	var p models.Payment
	testtool.WaitFor(t, "payment "+id+" is "+status, func() bool {
		return env.db.Take(&p, "id = ?", id).Error == nil && p.Status == status
	})
	return p
}

// In Stripe mode no card reaches the service: the checkout page has no
// card field and sends the buyer to Stripe's page; the order is made only
// by Stripe's signed notice, once however often it is sent, and refused
// money (a wrong amount, a name sold meanwhile) goes back through Stripe.
// Notices without a good signature change nothing.
func TestStripeCheckoutMakesOrdersOnlyFromSignedNotices(t *testing.T) {
	t.Parallel()
	env, srv, mock := stripeServed(t)
	for _, name := range []string{"sofahaven.com", "shortpaid.com", "goneaway.com", "leftpage.com"} {
		listLive(t, env, name, 250_000)
	}
	c := checkoutPartner(t, env, srv.URL, models.EnvLive)
	const shop = "https://shop.test"

	link := liveSession(t, c, "sofahaven.com", shop)
	res, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || strings.Contains(string(page), "card_number") || strings.Contains(string(page), "cvc") ||
		!strings.Contains(string(page), "Continue to Stripe") {
		t.Fatalf("the Stripe-mode page (%d) asks for a card or offers no way to Stripe:\n%s", res.StatusCode, page)
	}
	to, pay := payOnStripe(t, env, srv.URL, link, "sofahaven.com")
	if !strings.HasPrefix(to, "https://checkout.stripe.com/") || to != pay.RedirectURL || !strings.HasPrefix(pay.ProviderRef, "cs_") ||
		pay.Status != models.PaymentPending || pay.AmountCents != 250_000 || pay.Currency != "USD" {
		t.Fatalf("the form sent the buyer to %q with payment %+v; want Stripe's page of a pending payment", to, pay)
	}
	var held models.Listing
	env.db.Take(&held, "domain = ?", "sofahaven.com")
	if held.HeldSession == nil || held.LockedUntil == nil || held.LockedUntil.Sub(env.now) < 30*time.Minute {
		t.Errorf("the name is held until %v by session %v; want held for the page's life", held.LockedUntil, held.HeldSession)
	}
	if again, second := payOnStripe(t, env, srv.URL, link, "sofahaven.com"); again != to || second.ID != pay.ID {
		t.Errorf("a second submission went to %q (payment %s), want the same page %q (%s)", again, second.ID, to, pay.ID)
	}

	paid := stripepaytest.Event(t, "evt_paid_sofa", "checkout.session.completed",
		stripepaytest.PaidSession(t, mock, pay.ProviderRef, pay.ID, "pi_sofa", 250_000, "usd"), time.Now())
	for _, bad := range []struct{ name, header string }{
		{"no signature", ""},
		{"another endpoint's secret", stripepaytest.Sign(paid, "whsec_elsewhere", time.Now())},
		{"a stale timestamp", stripepaytest.Sign(paid, stripepaytest.WebhookSecret, time.Now().Add(-10*time.Minute))},
	} {
		if code, body := notify(t, srv.URL, paid, bad.header); code != http.StatusUnauthorized || body["error"] == nil {
			t.Errorf("%s: %d %v; want 401 invalid_signature", bad.name, code, body)
		}
	}
	var kept int64
	env.db.Model(&models.PaymentEvent{}).Count(&kept)
	if kept != 0 {
		t.Fatalf("%d notices kept from unsigned requests", kept)
	}
	if code, body := notify(t, srv.URL, paid, signedNow(paid)); code != 200 || body["acted_on"] != true {
		t.Fatalf("the signed completion: %d %v", code, body)
	}
	done := waitPayment(t, env, pay.ID, models.PaymentSucceeded)
	var o models.Order
	if err := env.db.Take(&o, "public_id = ?", done.OrderID).Error; err != nil || o.Status != models.OrderPaid ||
		o.ExternalPaymentRef != "pi_sofa" || o.SalePriceCents != 250_000 || o.BuyerEmail != "ada@example.com" || o.BuyerCountry != "NL" {
		t.Fatalf("the order of the paid notice = %+v, %v", o, err)
	}
	if code, body := notify(t, srv.URL, paid, signedNow(paid)); code != 200 || body["acted_on"] != false {
		t.Errorf("the same notice again: %d %v; want 200, not acted on", code, body)
	}
	var orders int64
	env.db.Model(&models.Order{}).Where("domain = ?", "sofahaven.com").Count(&orders)
	env.db.Model(&models.PaymentEvent{}).Count(&kept)
	if orders != 1 || kept != 1 {
		t.Errorf("%d orders and %d notices kept after a replay; want 1 and 1", orders, kept)
	}
	back, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(link + "&paid=1")
	if err != nil {
		t.Fatal(err)
	}
	back.Body.Close()
	if loc := back.Header.Get("Location"); back.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "order_id="+o.PublicID) {
		t.Errorf("the buyer back from Stripe: %d to %q; want on to the shop with the order", back.StatusCode, loc)
	}

	refunded := stripepaytest.Event(t, "evt_refund_sofa", "charge.refunded", stripepaytest.Object(t, mock, "/v1/charges/ch_sofa",
		map[string]any{"payment_intent": "pi_sofa", "amount_refunded": 5_000, "currency": "usd"}), time.Now())
	if code, _ := notify(t, srv.URL, refunded, signedNow(refunded)); code != 200 {
		t.Fatalf("charge.refunded: %d", code)
	}
	if p := waitPayment(t, env, pay.ID, models.PaymentPartiallyRefunded); p.RefundedCents != 5_000 {
		t.Errorf("after Stripe refunded 5000: %+v", p)
	}

	unknown := stripepaytest.Event(t, "evt_not_ours", "checkout.session.completed",
		stripepaytest.PaidSession(t, mock, "cs_test_elsewhere", "pay_of_another_app", "pi_other", 1_000, "usd"), time.Now())
	if code, _ := notify(t, srv.URL, unknown, signedNow(unknown)); code != 200 {
		t.Errorf("a notice of another integration's session: %d, want 200", code)
	}
	var ev models.PaymentEvent
	testtool.WaitFor(t, "the unknown session's notice is handled", func() bool {
		return env.db.Take(&ev, "id = ?", "stripe:evt_not_ours").Error == nil && ev.DoneAt != nil
	})
	if !strings.Contains(ev.Note, "unknown") {
		t.Errorf("the unknown session's notice: %+v", ev)
	}

	// Paid a different amount than the price: no order, the whole payment back.
	_, short := payOnStripe(t, env, srv.URL, liveSession(t, c, "shortpaid.com", shop), "shortpaid.com")
	wrong := stripepaytest.Event(t, "evt_short", "checkout.session.completed",
		stripepaytest.PaidSession(t, mock, short.ProviderRef, short.ID, "pi_short", 100, "usd"), time.Now())
	notify(t, srv.URL, wrong, signedNow(wrong))
	if p := waitPayment(t, env, short.ID, models.PaymentRefunded); p.OrderID != nil || p.RefundedCents != 100 || !strings.HasPrefix(p.RefundID, "re_") {
		t.Errorf("a payment of the wrong amount: %+v; want no order and the 100 cents back through Stripe", p)
	}

	// The name sold meanwhile (the hold lapsed): the payment goes back.
	_, late := payOnStripe(t, env, srv.URL, liveSession(t, c, "goneaway.com", shop), "goneaway.com")
	env.db.Model(&models.Listing{}).Where("domain = ?", "goneaway.com").Updates(map[string]any{"sold_at": env.now, "held_session": nil, "locked_until": nil, "held_by": nil})
	gone := stripepaytest.Event(t, "evt_gone", "checkout.session.completed",
		stripepaytest.PaidSession(t, mock, late.ProviderRef, late.ID, "pi_gone", 250_000, "usd"), time.Now())
	notify(t, srv.URL, gone, signedNow(gone))
	if p := waitPayment(t, env, late.ID, models.PaymentRefunded); p.OrderID != nil || p.RefundedCents != 250_000 {
		t.Errorf("a payment for a name sold meanwhile: %+v; want it all back", p)
	}

	// The buyer left Stripe's page: the payment fails and the hold ends.
	_, left := payOnStripe(t, env, srv.URL, liveSession(t, c, "leftpage.com", shop), "leftpage.com")
	refused := stripepaytest.Event(t, "evt_refused", "payment_intent.payment_failed", stripepaytest.Object(t, mock, "/v1/payment_intents/pi_left",
		map[string]any{"metadata": map[string]string{"payment_id": left.ID}, "last_payment_error": map[string]any{"message": "Your card has insufficient funds.", "type": "card_error"}}), time.Now())
	notify(t, srv.URL, refused, signedNow(refused))
	testtool.WaitFor(t, "the refusal is noted", func() bool {
		var p models.Payment
		return env.db.Take(&p, "id = ?", left.ID).Error == nil && strings.Contains(p.Note, "insufficient funds") && p.Status == models.PaymentPending
	})
	expired := stripepaytest.Event(t, "evt_left", "checkout.session.expired", stripepaytest.Object(t, mock, "/v1/checkout/sessions/"+left.ProviderRef,
		map[string]any{"status": "expired", "payment_status": "unpaid", "payment_intent": nil, "metadata": map[string]string{"payment_id": left.ID}}), time.Now())
	notify(t, srv.URL, expired, signedNow(expired))
	waitPayment(t, env, left.ID, models.PaymentFailed)
	var free models.Listing
	env.db.Take(&free, "domain = ?", "leftpage.com")
	if free.HeldSession != nil || free.SoldAt != nil {
		t.Errorf("after the page expired the name is held by %v, sold %v; want it free", free.HeldSession, free.SoldAt)
	}
}

// A buyer pays a live checkout on Stripe in a real browser: the page asks
// for no card and sends the browser to the page Stripe made for the
// payment (served here for checkout.stripe.com); back from it, the page
// says the payment is being recorded and refreshes itself until Stripe's
// signed notice has made the order, then goes on to the shop with it.
func TestBrowserStripeCheckout(t *testing.T) {
	env, srv, mock := stripeServed(t)
	var mu sync.Mutex
	var asked string
	stripePage := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		asked = r.URL.Path
		mu.Unlock()
		w.Write([]byte("<!doctype html><title>Stripe Checkout</title><p id=stripe-page>Pay on Stripe.</p>"))
	}))
	t.Cleanup(stripePage.Close)
	ctx := newChromium(t, chromedp.Flag("host-resolver-rules", "MAP checkout.stripe.com "+stripePage.Listener.Addr().String()),
		chromedp.Flag("ignore-certificate-errors", true))
	shop := newTestShop(t)
	listLive(t, env, "sofahaven.com", 250_000)
	link := liveSession(t, checkoutPartner(t, env, srv.URL, models.EnvLive), "sofahaven.com", shop.URL)

	text := pageText(t, ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#name"))); err != nil {
		t.Fatalf("checkout page: %v", err)
	}
	checkPage(t, ctx, "checkout-stripe")
	if body := text("body"); strings.Contains(body, "Card number") || strings.Contains(body, "CVC") ||
		!strings.Contains(body, "Continue to Stripe to pay 2,500.00 USD") || !strings.Contains(body, "Test mode") {
		t.Errorf("the Stripe-mode page = %q; want no card field and the way to Stripe", body)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#name"), "Ada Buyer"), chromedp.SendKeys(chromedp.CSS("#country"), "NL"),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("#stripe-page"))); err != nil {
		t.Fatalf("on to Stripe: %v", err)
	}
	var pay models.Payment
	if err := env.db.Take(&pay, "domain = ?", "sofahaven.com").Error; err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(pay.RedirectURL)
	mu.Lock()
	got := asked
	mu.Unlock()
	if u == nil || u.Host != "checkout.stripe.com" || got != u.Path {
		t.Errorf("the browser asked Stripe for %q; want the page Stripe returned, %q", got, pay.RedirectURL)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(link+"&paid=1"), chromedp.WaitVisible(chromedp.CSS("#confirming"))); err != nil {
		t.Fatalf("back from Stripe before its notice: %v", err)
	}
	checkPage(t, ctx, "checkout-confirming")
	paid := stripepaytest.Event(t, "evt_browser", "checkout.session.completed",
		stripepaytest.PaidSession(t, mock, pay.ProviderRef, pay.ID, "pi_browser", 250_000, "usd"), time.Now())
	if code, _ := notify(t, srv.URL, paid, signedNow(paid)); code != 200 {
		t.Fatalf("Stripe's notice: %d", code)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#done"))); err != nil {
		t.Fatalf("the page did not move on to the shop once the order was made: %v", err)
	}
	id := shop.landed().Get("order_id")
	var o models.Order
	if err := env.db.Take(&o, "public_id = ?", id).Error; err != nil || o.Status != models.OrderPaid || o.ExternalPaymentRef != "pi_browser" {
		t.Errorf("the order the browser brought back (%q) = %+v, %v", id, o, err)
	}
}
