package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/ledger/ledgertest"
	"github.com/domaind/domaind/internal/payment/stripepay/stripepaytest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/partnerclient"
)

// The money model of TestMoneyChaos, in one place: every money action
// the workload takes, with its weight, and every invariant checked when
// the work has run out. A money feature adds its actions and invariants
// here.
var (
	chaosActions = []chaosAction{
		{"quote", 10, actQuote},
		{"order", 10, actOrder},
		{"checkout", 10, actCheckout},
		{"checkout-race", 3, actCheckoutRace},
		{"stripe-checkout", 6, actStripeCheckout},
		{"refund", 8, actRefund},
		{"ops-move", 14, actOpsMove},
		{"settlement-run", 1, actSettlementRun},
		{"payout-paid", 2, actPayoutPaid},
		{"referral-click", 1, actReferralClick},
	}
	chaosInvariants = []chaosInvariant{
		{"ledger", "every transaction sums to zero; statements, transactions and payouts are their lines' sums", checkLedger},
		{"charges", "every charge has one order or is refunded in full; every hosted order one charge", checkCharges},
		{"stripe", "every payment Stripe took has its one order or is refunded in full; a page that expired made nothing", checkStripe},
		{"listings", "no name has two live orders, and none is for sale after its push succeeded", checkListings},
		{"settlement", "orders settle once, after delivery, never after a full refund", checkSettlement},
		{"events", "each order's events follow its state table, match its timeline, and reached the receiver", checkEvents},
	}
)

// chaosAction is a money action: run does it once with rng's choices and
// returns its outcome (an HTTP status, or a word), calling w.unexpected
// for an answer no caller should get.
type chaosAction struct {
	name   string
	weight int
	run    func(w *chaosWorld, rng *rand.Rand) string
}

// chaosInvariant is a property of the money once the work has run out:
// check returns what it counted and every violation.
type chaosInvariant struct {
	name, what string
	check      func(w *chaosWorld) (counts string, problems []string)
}

// outcome names a partner API answer: its status, or "unexpected" (noted)
// for a 5xx or a request that did not get an answer.
func (w *chaosWorld) outcome(what string, res *http.Response, body []byte, err error) string {
	switch {
	case err != nil:
		return w.unexpected("%s: %v", what, err)
	case res.StatusCode >= 500:
		return w.unexpected("%s: %d %s", what, res.StatusCode, body)
	}
	return strconv.Itoa(res.StatusCode)
}

func (w *chaosWorld) pick(rng *rand.Rand) (int, *chaosPartner) {
	i := rng.IntN(len(w.partners))
	return i, w.partners[i]
}

func newKey(rng *rand.Rand) string { return fmt.Sprintf("chaos-%016x", rng.Uint64()) }

func actQuote(w *chaosWorld, rng *rand.Rand) string {
	i, p := w.pick(rng)
	l := w.listings[rng.IntN(len(w.listings))]
	res, body, err := p.client.Do(context.Background(), "POST", "/api/partner/v1/quotes", nil, mustJSON(map[string]string{"domain": l.domain}))
	out := w.outcome("quote", res, body, err)
	if out == "201" {
		var q struct {
			QuoteID    string `json:"quote_id"`
			PriceCents int64  `json:"price_cents"`
		}
		json.Unmarshal(body, &q)
		w.mu.Lock()
		w.quotes = append(w.quotes, chaosQuote{id: q.QuoteID, partner: i, domain: l.domain, cents: q.PriceCents})
		w.mu.Unlock()
	}
	return out
}

// actOrder records a partner-collected sale: of one of the partner's
// quotes, or of any name at its buy-now price; now and then it sends the
// same request again with the same Idempotency-Key, which must answer the
// same order.
func actOrder(w *chaosWorld, rng *rand.Rand) string {
	i, p := w.pick(rng)
	l := w.listings[rng.IntN(len(w.listings))]
	order := map[string]any{"domain": l.domain, "expected_price": l.cents, "currency": "USD", "external_payment_ref": newKey(rng),
		"buyer": map[string]string{"email": chaosBuyerEmail, "name": "Chaos Buyer", "country": "NL"}}
	w.mu.Lock()
	for _, q := range w.quotes {
		if q.partner == i && rng.IntN(2) == 0 {
			order["domain"], order["expected_price"], order["quote_id"] = q.domain, q.cents, q.id
			break
		}
	}
	w.mu.Unlock()
	key := newKey(rng)
	res, body, err := p.client.Do(context.Background(), "POST", "/api/partner/v1/orders", nil, mustJSON(order), partnerclient.WithIdempotencyKey(key))
	out := w.outcome("order", res, body, err)
	if out != "201" {
		return out
	}
	id := publicID(body)
	w.mu.Lock()
	w.orders = append(w.orders, chaosOrder{id: id, partner: i})
	w.mu.Unlock()
	if rng.IntN(10) == 0 {
		res, again, err := p.client.Do(context.Background(), "POST", "/api/partner/v1/orders", nil, mustJSON(order), partnerclient.WithIdempotencyKey(key))
		if w.outcome("order replay", res, again, err) != "201" || publicID(again) != id {
			return w.unexpected("an order's replay answered %s, not order %s", again, id)
		}
	}
	return out
}

func publicID(body []byte) string {
	var v struct {
		PublicID string `json:"public_id"`
	}
	json.Unmarshal(body, &v)
	return v.PublicID
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// actCheckout opens a hosted checkout of a random name and a buyer pays
// it, sometimes after following an affiliate's link.
func actCheckout(w *chaosWorld, rng *rand.Rand) string {
	i, p := w.pick(rng)
	l := w.listings[rng.IntN(len(w.listings))]
	link, out := w.openCheckout(p, l.domain)
	if link == "" {
		return out
	}
	return w.pay(rng, i, link, rng.IntN(3) == 0)
}

// actCheckoutRace opens two or three checkouts of one name and their
// buyers pay at the same moment: one is charged, the others told the
// name went.
func actCheckoutRace(w *chaosWorld, rng *rand.Rand) string {
	i, p := w.pick(rng)
	l := w.listings[rng.IntN(len(w.listings))]
	n := 2 + rng.IntN(2)
	links := make([]string, 0, n)
	for range n {
		link, out := w.openCheckout(p, l.domain)
		if link == "" {
			return out
		}
		links = append(links, link)
	}
	seeds := make([]uint64, n)
	for k := range seeds {
		seeds[k] = rng.Uint64()
	}
	outs := make([]string, n)
	var wg sync.WaitGroup
	for k, link := range links {
		wg.Go(func() { outs[k] = w.pay(rand.New(rand.NewPCG(seeds[k], 0)), i, link, false) })
	}
	wg.Wait()
	paid := 0
	for _, o := range outs {
		if o == "paid" {
			paid++
		}
	}
	if paid > 1 {
		return w.unexpected("%d buyers of %s paid on separate checkouts at once", paid, l.domain)
	}
	return fmt.Sprintf("%d-paid", paid)
}

// openCheckout opens a checkout of domain and returns its link, or ""
// with the outcome.
func (w *chaosWorld) openCheckout(p *chaosPartner, domain string) (string, string) {
	res, body, err := p.client.Do(context.Background(), "POST", "/api/partner/v1/checkout-session", nil,
		mustJSON(map[string]string{"domain": domain, "return_url": w.receiver.url + "/thanks", "cancel_url": w.receiver.url + "/shop"}))
	out := w.outcome("checkout-session", res, body, err)
	if out != "201" {
		return "", "session-" + out
	}
	var s struct {
		CheckoutURL string `json:"checkout_url"`
	}
	json.Unmarshal(body, &s)
	return s.CheckoutURL, ""
}

var (
	hiddenField = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)
	orderInURL  = regexp.MustCompile(`[?&]order_id=(ord_[0-9a-f]+)`)
)

// pay is a buyer paying the checkout at link in a browser-like client (its
// own cookies, no redirects followed): it reads the page's form, pays with
// the test card that pays or, one time in six, the one declined, and
// answers "paid" when the checkout sent it back with its order. Of the
// buyers told the processor's answer was lost, half pay again and half
// leave (the reconciliation returns their charge).
func (w *chaosWorld) pay(rng *rand.Rand, partner int, link string, referred bool) string {
	browser := newBrowser(rng)
	if referred && len(w.links) > 0 {
		res, err := browser.Get(w.base + "/r/" + w.links[rng.IntN(len(w.links))])
		if err != nil {
			return w.unexpected("referral link: %v", err)
		}
		res.Body.Close()
	}
	card := "4242 4242 4242 4242"
	if rng.IntN(6) == 0 {
		card = "4000 0000 0000 0002"
	}
	for attempt := 0; ; attempt++ {
		res, err := browser.Get(link)
		if err != nil {
			return w.unexpected("checkout page: %v", err)
		}
		page := readAll(res)
		if res.StatusCode != http.StatusOK {
			return "page-" + strconv.Itoa(res.StatusCode)
		}
		form := url.Values{"card_number": {card}, "expiry": {"12/30"}, "cvc": {"123"}, "name": {"Chaos Buyer"},
			"email": {chaosBuyerEmail}, "country": {"NL"}}
		for _, m := range hiddenField.FindAllStringSubmatch(page, -1) {
			form.Set(m[1], m[2])
		}
		if form.Get("csrf_token") == "" {
			return "closed" // sold or reserved: the page shows no form
		}
		res, err = browser.PostForm(w.base+"/checkout", form)
		if err != nil {
			return w.unexpected("checkout payment: %v", err)
		}
		answer := readAll(res)
		switch {
		case res.StatusCode == http.StatusSeeOther:
			m := orderInURL.FindStringSubmatch(res.Header.Get("Location"))
			if m == nil {
				return w.unexpected("a paid checkout went to %q without its order", res.Header.Get("Location"))
			}
			w.mu.Lock()
			w.orders = append(w.orders, chaosOrder{id: m[1], partner: partner, hosted: true})
			w.mu.Unlock()
			return "paid"
		case res.StatusCode == http.StatusServiceUnavailable && strings.Contains(answer, "Pay again"):
			if attempt == 0 && rng.IntN(2) == 0 {
				continue // the processor's answer was lost: this buyer pays again
			}
			return "answer-lost-left" // and this one leaves
		case res.StatusCode >= 500:
			return w.unexpected("checkout payment: %d %s", res.StatusCode, answer)
		}
		return "pay-" + strconv.Itoa(res.StatusCode)
	}
}

// stripeSale is a payment made on Stripe's page, as Stripe (this test)
// saw it: paid (with charge, for amount cents) or left to expire.
type stripeSale struct {
	payment, charge string
	amount          int64
	paid, wrong     bool // wrong: paid another amount than the price
}

// actStripeCheckout is a buyer paying a live checkout on Stripe's page,
// with this test as Stripe: the buyer pays (one time in eight another
// amount than the price) or leaves and the page expires, and Stripe's
// signed notice of it comes once, or twice at once (Stripe retrying, or
// the notice and the reconciliation's look at the page).
func actStripeCheckout(w *chaosWorld, rng *rand.Rand) string {
	if w.stripeMock == "" {
		return "no-stripe"
	}
	i, p := w.pick(rng)
	l := w.liveListings[rng.IntN(len(w.liveListings))]
	res, body, err := p.live.Do(context.Background(), "POST", "/api/partner/v1/checkout-session", nil, mustJSON(map[string]string{
		"domain": l.domain, "return_url": "https://shop.chaos.example/ok", "cancel_url": "https://shop.chaos.example/"}))
	if out := w.outcome("stripe checkout-session", res, body, err); out != "201" {
		return "session-" + out
	}
	var s struct {
		ID          string `json:"id"`
		CheckoutURL string `json:"checkout_url"`
	}
	json.Unmarshal(body, &s)
	browser := newBrowser(rng)
	res, err = browser.Get(s.CheckoutURL)
	if err != nil {
		return w.unexpected("Stripe checkout page: %v", err)
	}
	page := readAll(res)
	form := url.Values{"name": {"Chaos Buyer"}, "email": {chaosBuyerEmail}, "country": {"NL"}}
	for _, m := range hiddenField.FindAllStringSubmatch(page, -1) {
		form.Set(m[1], m[2])
	}
	if res.StatusCode != http.StatusOK || form.Get("csrf_token") == "" {
		return "closed-" + strconv.Itoa(res.StatusCode)
	}
	res, err = browser.PostForm(w.base+"/checkout", form)
	if err != nil {
		return w.unexpected("Stripe checkout payment: %v", err)
	}
	answer := readAll(res)
	switch {
	case res.StatusCode >= 500:
		return w.unexpected("Stripe checkout payment: %d %s", res.StatusCode, answer)
	case res.StatusCode != http.StatusSeeOther:
		return "pay-" + strconv.Itoa(res.StatusCode)
	case !strings.HasPrefix(res.Header.Get("Location"), "https://checkout.stripe.com/"):
		return w.unexpected("a Stripe checkout went to %q, not Stripe's page", res.Header.Get("Location"))
	}
	var pay models.Payment
	if err := w.c.db.Take(&pay, "session_id = ? AND status = ? AND provider_ref <> ''", s.ID, models.PaymentPending).Error; err != nil {
		return w.unexpected("the pending payment of %s sent to Stripe: %v", s.ID, err)
	}

	sale := stripeSale{payment: pay.ID, charge: stripepaytest.NewID("pi"), amount: pay.AmountCents, paid: rng.IntN(5) > 0}
	typ, obj := "checkout.session.expired", stripepaytest.Object(w.t, w.stripeMock, "/v1/checkout/sessions/"+pay.ProviderRef,
		map[string]any{"status": "expired", "payment_status": "unpaid", "payment_intent": nil, "metadata": map[string]string{"payment_id": pay.ID}})
	if sale.paid {
		if sale.wrong = rng.IntN(8) == 0; sale.wrong {
			sale.amount--
		}
		typ, obj = "checkout.session.completed", stripepaytest.PaidSession(w.t, w.stripeMock, pay.ProviderRef, pay.ID, sale.charge, sale.amount, "usd")
	}
	ids := []string{stripepaytest.NewID("evt")}
	switch rng.IntN(4) {
	case 0:
		ids = append(ids, ids[0]) // Stripe sends it again
	case 1:
		ids = append(ids, stripepaytest.NewID("evt")) // another notice of the same page
	}
	w.mu.Lock()
	w.stripe = append(w.stripe, sale)
	w.mu.Unlock()
	var wg sync.WaitGroup
	for _, id := range ids {
		payload := stripepaytest.Event(w.t, id, typ, obj, time.Now())
		wg.Go(func() {
			res, err := http.Post(w.base+"/api/payments/stripe/webhook", "application/json", bytes.NewReader(payload))
			if err != nil {
				w.unexpected("an unsigned Stripe notice: %v", err)
				return
			}
			if b := readAll(res); res.StatusCode != http.StatusUnauthorized {
				w.unexpected("an unsigned Stripe notice: %d %s, want 401", res.StatusCode, b)
			}
			req, _ := http.NewRequest(http.MethodPost, w.base+"/api/payments/stripe/webhook", bytes.NewReader(payload))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Stripe-Signature", stripepaytest.Sign(payload, stripepaytest.WebhookSecret, time.Now()))
			res, err = http.DefaultClient.Do(req)
			if err != nil {
				w.unexpected("Stripe's notice: %v", err)
				return
			}
			if b := readAll(res); res.StatusCode != http.StatusOK {
				w.unexpected("Stripe's notice: %d %s", res.StatusCode, b)
			}
		})
	}
	wg.Wait()
	switch {
	case !sale.paid:
		return "expired"
	case sale.wrong:
		return "paid-wrong-amount"
	}
	// The order is the worker's to make; once made, the partner may refund
	// it and ops move it, as any order.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := w.c.db.Take(&pay, "id = ?", pay.ID).Error; err == nil && pay.OrderID != nil {
			w.mu.Lock()
			w.orders = append(w.orders, chaosOrder{id: *pay.OrderID, partner: i, hosted: true, live: true})
			w.mu.Unlock()
			return "paid"
		}
	}
	return "paid-order-later" // a worker was killed under it: the order comes after the recovery
}

// newBrowser is a buyer's browser: its own cookies, no redirects
// followed, and an address of its own, which the proxy in front of the
// api (DOMAIND_TRUSTED_PROXIES) passes on.
func newBrowser(rng *rand.Rand) *http.Client {
	jar, _ := cookiejar.New(nil)
	addr := fmt.Sprintf("198.51.100.%d", 1+rng.IntN(254))
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: forwardedFor{addr},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// forwardedFor sends requests as a proxy does for a client at addr.
type forwardedFor struct{ addr string }

func (f forwardedFor) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("X-Forwarded-For", f.addr)
	return http.DefaultTransport.RoundTrip(req)
}

func readAll(res *http.Response) string {
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// actRefund refunds one of a partner's orders, in full or in part.
func actRefund(w *chaosWorld, rng *rand.Rand) string {
	o, ok := w.someOrder(rng)
	if !ok {
		return "no-order"
	}
	client := w.partners[o.partner].client
	if o.live {
		client = w.partners[o.partner].live
	}
	refund := map[string]any{"order_id": o.id, "reason": "chaos refund"}
	if rng.IntN(2) == 0 {
		refund["amount_cents"] = 1 + rng.IntN(5_000)
	}
	res, body, err := client.Do(context.Background(), "POST", "/api/partner/v1/refunds", nil, mustJSON(refund), partnerclient.WithIdempotencyKey(newKey(rng)))
	return w.outcome("refund", res, body, err)
}

func (w *chaosWorld) someOrder(rng *rand.Rand) (chaosOrder, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.orders) == 0 {
		return chaosOrder{}, false
	}
	return w.orders[rng.IntN(len(w.orders))], true
}

// actOpsMove is ops moving an order: mostly a move its status allows,
// sometimes any (which must be refused and change nothing). A transfer's
// push goes to a registrar that refuses it one time in four, and one time
// in eight to one that makes it but loses its answer (the push ends
// unconfirmed, for fail-transfer or confirm-delivery).
func actOpsMove(w *chaosWorld, rng *rand.Rand) string {
	o, ok := w.someOrder(rng)
	if !ok {
		return "no-order"
	}
	code, answer := w.ops("GET", "/api/ops/orders/"+o.id, "")
	if code != 200 {
		return w.unexpected("ops read of %s: %d %s", o.id, code, answer)
	}
	var now struct{ Status, Review string }
	json.Unmarshal(answer, &now)
	choices := []string{"clear-review", "start-transfer", "confirm-delivery", "fail-transfer", "cancel"}
	switch {
	case rng.IntN(5) == 0: // any move
	case now.Review == models.ReviewPending:
		choices = []string{"clear-review", "clear-review", "clear-review", "cancel"}
	case now.Status == models.OrderExternallyPaid || now.Status == models.OrderPaid:
		choices = []string{"start-transfer", "start-transfer", "start-transfer", "cancel"}
	case now.Status == models.OrderTransferInProgress:
		choices = []string{"start-transfer", "confirm-delivery", "fail-transfer", "cancel"}
	}
	action, body := choices[rng.IntN(len(choices))], ""
	if action == "start-transfer" {
		body = `{"recipient":"chaos-registrar"}`
		switch rng.IntN(8) {
		case 0, 1:
			body = `{"recipient":"sandbox-refuse"}`
		case 2:
			body = `{"recipient":"sandbox-lose"}` // made, unanswered, then the repeat refused: unconfirmed
		}
	}
	code, answer = w.ops("POST", "/api/ops/orders/"+o.id+"/"+action, body)
	if code >= 500 {
		return w.unexpected("%s of %s: %d %s", action, o.id, code, answer)
	}
	return action + "-" + strconv.Itoa(code)
}

// ops is a request with the ops login.
func (w *chaosWorld) ops(method, path, body string) (int, []byte) {
	req, _ := http.NewRequest(method, w.base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth("ops", "e2e-ops-password")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		w.unexpected("%s %s: %v", method, path, err)
		return 0, nil
	}
	return res.StatusCode, []byte(readAll(res))
}

// actSettlementRun asks for the run of the last closed one-minute period,
// as finance does by hand (the scheduler asks for each one too).
func actSettlementRun(w *chaosWorld, _ *rand.Rand) string {
	start := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)
	code, body := w.ops("POST", "/api/ops/settlements/runs", fmt.Sprintf(`{"period_start":%q}`, start.Format(time.RFC3339)))
	if code >= 500 {
		return w.unexpected("settlement run: %d %s", code, body)
	}
	return strconv.Itoa(code)
}

// actPayoutPaid is finance paying a pending payout and marking it paid.
func actPayoutPaid(w *chaosWorld, rng *rand.Rand) string {
	code, body := w.ops("GET", "/api/ops/payouts?status=pending", "")
	if code != 200 {
		return w.unexpected("pending payouts: %d %s", code, body)
	}
	var list struct {
		Payouts []struct{ ID string } `json:"payouts"`
	}
	json.Unmarshal(body, &list)
	if len(list.Payouts) == 0 {
		return "none"
	}
	id := list.Payouts[rng.IntN(len(list.Payouts))].ID
	code, body = w.ops("POST", "/api/ops/payouts/"+id+"/mark-paid", fmt.Sprintf(`{"reference":"chaos-%s"}`, id))
	if code >= 500 {
		return w.unexpected("mark %s paid: %d %s", id, code, body)
	}
	return strconv.Itoa(code)
}

func actReferralClick(w *chaosWorld, rng *rand.Rand) string {
	if len(w.links) == 0 {
		return "no-link"
	}
	res, err := newBrowser(rng).Get(w.base + "/r/" + w.links[rng.IntN(len(w.links))])
	if err != nil {
		return w.unexpected("referral click: %v", err)
	}
	readAll(res)
	return strconv.Itoa(res.StatusCode)
}

// scalar runs a query of one number.
func (w *chaosWorld) scalar(q string, args ...any) int64 {
	var n int64
	if err := w.c.db.Raw(q, args...).Scan(&n).Error; err != nil {
		w.t.Fatalf("%s: %v", q, err)
	}
	return n
}

// checkLedger: every ledger transaction sums to zero, each order's lines
// are its sale less its refunds (ledgertest), and what the partner API
// reports of each partner (statements, transaction totals, payouts) is
// the sum of that partner's lines.
func checkLedger(w *chaosWorld) (string, []string) {
	var problems []string
	ledgertest.Check(w.t, w.c.db)
	txns := w.scalar(`SELECT count(DISTINCT txn_id) FROM ledger_entries`)
	lines := w.scalar(`SELECT count(*) FROM ledger_entries`)
	unbalanced := w.scalar(`SELECT count(*) FROM (SELECT txn_id FROM ledger_entries GROUP BY txn_id, currency HAVING SUM(amount_cents) <> 0) u`)
	if unbalanced > 0 {
		problems = append(problems, fmt.Sprintf("%d transactions do not sum to zero", unbalanced))
	}
	ctx := context.Background()
	for _, p := range w.partners {
		sum := func(where string, args ...any) int64 {
			return w.scalar(`SELECT COALESCE(SUM(l.amount_cents), 0) FROM ledger_entries l LEFT JOIN orders o ON o.public_id = l.order_id
				WHERE l.partner_id = ? AND `+where, append([]any{p.id}, args...)...)
		}
		var gmv, commission int64
		for _, client := range []*partnerclient.Client{p.client, p.live} { // each credential reports its environment
			var txnList struct {
				Totals []struct {
					GMVCents        int64 `json:"gmv_cents"`
					CommissionCents int64 `json:"commission_cents"`
				} `json:"totals"`
			}
			if err := client.GetJSON(ctx, "/api/partner/v1/transactions", nil, &txnList); err != nil {
				problems = append(problems, fmt.Sprintf("transactions of %s: %v", p.id, err))
				continue
			}
			for _, t := range txnList.Totals {
				gmv, commission = gmv+t.GMVCents, commission+t.CommissionCents
			}
		}
		if want := -sum("l.account = ?", ledger.Sales); gmv != want {
			problems = append(problems, fmt.Sprintf("%s: transactions total gmv %d, its sales lines %d", p.id, gmv, want))
		}
		if want := sum("l.account = ? AND l.kind IN ?", ledger.Commission, []string{ledger.KindSale, ledger.KindRefund}); commission != want {
			problems = append(problems, fmt.Sprintf("%s: transactions total commission %d, its commission lines %d", p.id, commission, want))
		}
		statements, err := allStatements(ctx, p)
		if err != nil {
			problems = append(problems, fmt.Sprintf("statements of %s: %v", p.id, err))
			continue
		}
		settled := "o.status = 'SETTLED'"
		if want := -sum(settled+" AND l.account = ?", ledger.Sales); statements.gross+statements.refunds != want {
			problems = append(problems, fmt.Sprintf("%s: statements gross %d and refunds %d, its settled sales lines %d", p.id, statements.gross, statements.refunds, want))
		}
		if want := sum(settled+" AND l.account = ? AND l.kind IN ?", ledger.Commission, []string{ledger.KindSale, ledger.KindRefund}); statements.commission != want {
			problems = append(problems, fmt.Sprintf("%s: statements commission %d, its settled commission lines %d", p.id, statements.commission, want))
		}
		if want := -sum("l.account = ? AND l.kind = ?", ledger.Payable, ledger.KindReferral); statements.referral != want {
			problems = append(problems, fmt.Sprintf("%s: statements referral %d, its payable referral lines %d", p.id, statements.referral, want))
		}
		var paid int64
		for _, client := range []*partnerclient.Client{p.client, p.live} {
			var payouts struct {
				Totals []struct {
					PaidCents int64 `json:"paid_cents"`
				} `json:"totals"`
			}
			if err := client.GetJSON(ctx, "/api/partner/v1/payouts", nil, &payouts); err != nil {
				problems = append(problems, fmt.Sprintf("payouts of %s: %v", p.id, err))
				continue
			}
			for _, t := range payouts.Totals {
				paid += t.PaidCents
			}
		}
		if want := sum("l.account = ? AND l.kind = ?", ledger.Payable, ledger.KindPayout); paid != want {
			problems = append(problems, fmt.Sprintf("%s: payouts paid %d, its payable payout lines %d", p.id, paid, want))
		}
	}
	return fmt.Sprintf("%d transactions of %d lines, %d unbalanced; %d partners' reports against their lines", txns, lines, unbalanced, len(w.partners)), problems
}

type statementSums struct{ gross, refunds, commission, referral int64 }

func allStatements(ctx context.Context, p *chaosPartner) (statementSums, error) {
	var s statementSums
	for _, client := range []*partnerclient.Client{p.client, p.live} { // each credential reads its environment's
		if err := addStatements(ctx, client, &s); err != nil {
			return s, err
		}
	}
	return s, nil
}

// addStatements adds the statements client reads to s.
func addStatements(ctx context.Context, client *partnerclient.Client, s *statementSums) error {
	q := url.Values{"limit": {"100"}}
	for {
		var page struct {
			Settlements []struct {
				GrossCents      int64 `json:"gross_cents"`
				RefundsCents    int64 `json:"refunds_cents"`
				CommissionCents int64 `json:"commission_cents"`
				ReferralCents   int64 `json:"referral_cents"`
			} `json:"settlements"`
			NextCursor *string `json:"next_cursor"`
		}
		if err := client.GetJSON(ctx, "/api/partner/v1/settlements", q, &page); err != nil {
			return err
		}
		for _, st := range page.Settlements {
			s.gross, s.refunds, s.commission, s.referral = s.gross+st.GrossCents, s.refunds+st.RefundsCents,
				s.commission+st.CommissionCents, s.referral+st.ReferralCents
		}
		if page.NextCursor == nil {
			return nil
		}
		q.Set("cursor", *page.NextCursor)
	}
}

// checkCharges: every charge the processor took (its own record) is a
// payment of ours, and has exactly one order or is refunded in full; a
// charge's refunds at the processor are its order's refunds; every hosted
// order has exactly one charge and one payment.
func checkCharges(w *chaosWorld) (string, []string) {
	var charges []models.SandboxCharge
	if err := w.c.db.Find(&charges).Error; err != nil {
		w.t.Fatal(err)
	}
	var problems []string
	var withOrder, returned int
	for _, ch := range charges {
		var orders []models.Order
		w.c.db.Where("external_payment_ref = ? AND payment_model = ?", ch.ID, models.PaymentHosted).Find(&orders)
		payments := w.scalar(`SELECT count(*) FROM payments WHERE charge_id = ?`, ch.ID)
		switch {
		case payments != 1:
			problems = append(problems, fmt.Sprintf("charge %s is %d payments, want 1", ch.ID, payments))
		case len(orders) > 1:
			problems = append(problems, fmt.Sprintf("charge %s paid %d orders", ch.ID, len(orders)))
		case len(orders) == 1 && orders[0].RefundedCents != ch.RefundedCents:
			problems = append(problems, fmt.Sprintf("charge %s: %d refunded at the processor, its order %s refunded %d", ch.ID, ch.RefundedCents, orders[0].PublicID, orders[0].RefundedCents))
		case len(orders) == 1:
			withOrder++
		case ch.RefundedCents != ch.AmountCents:
			problems = append(problems, fmt.Sprintf("charge %s of %d has no order and %d of it refunded", ch.ID, ch.AmountCents, ch.RefundedCents))
		default:
			returned++
		}
	}
	var hosted []models.Order
	w.c.db.Where("payment_model = ? AND environment = ?", models.PaymentHosted, models.EnvSandbox).Find(&hosted) // Stripe's: checkStripe
	for _, o := range hosted {
		if n := w.scalar(`SELECT count(*) FROM sandbox_charges WHERE id = ?`, o.ExternalPaymentRef); n != 1 {
			problems = append(problems, fmt.Sprintf("hosted order %s has %d charges", o.PublicID, n))
		}
		if n := w.scalar(`SELECT count(*) FROM payments WHERE order_id = ? AND charge_id = ?`, o.PublicID, o.ExternalPaymentRef); n != 1 {
			problems = append(problems, fmt.Sprintf("hosted order %s has %d payments of its charge", o.PublicID, n))
		}
	}
	failed := w.scalar(`SELECT count(*) FROM payments WHERE status = 'failed'`)
	return fmt.Sprintf("%d charges: %d with their order, %d without one and returned in full; %d hosted orders; %d failed payments",
		len(charges), withOrder, returned, len(hosted), failed), problems
}

// checkStripe: each payment Stripe took has exactly one order, of its
// charge and amount, or (another amount than the price) is refunded in
// full and made none; a page that expired made nothing; and every hosted
// live order is of a charge Stripe took.
func checkStripe(w *chaosWorld) (string, []string) {
	w.mu.Lock()
	sales := slices.Clone(w.stripe)
	w.mu.Unlock()
	var problems []string
	var ordered, returned, expired int
	charges := map[string]bool{}
	for _, s := range sales {
		var p models.Payment
		if err := w.c.db.Take(&p, "id = ?", s.payment).Error; err != nil {
			w.t.Fatal(err)
		}
		var orders []models.Order
		w.c.db.Where("external_payment_ref = ?", s.charge).Find(&orders)
		switch {
		case !s.paid:
			if p.Status != models.PaymentFailed || p.OrderID != nil || len(orders) > 0 {
				problems = append(problems, fmt.Sprintf("payment %s expired on Stripe's page but is %s with order %v", p.ID, p.Status, p.OrderID))
			}
			expired++
		case s.wrong:
			if p.Status != models.PaymentRefunded || p.RefundedCents != s.amount || p.OrderID != nil || len(orders) > 0 || !strings.HasPrefix(p.RefundID, "re_") {
				problems = append(problems, fmt.Sprintf("payment %s paid %d, not its price: %s, %d refunded (%q), order %v", p.ID, s.amount, p.Status, p.RefundedCents, p.RefundID, p.OrderID))
			}
			returned++
		case len(orders) != 1 || p.OrderID == nil || *p.OrderID != orders[0].PublicID || orders[0].SalePriceCents != s.amount || p.ChargeID == nil || *p.ChargeID != s.charge:
			problems = append(problems, fmt.Sprintf("payment %s: Stripe took %s for %d, and it paid %d orders (payment %s, order %v)", p.ID, s.charge, s.amount, len(orders), p.Status, p.OrderID))
		case orders[0].RefundedCents != p.RefundedCents:
			problems = append(problems, fmt.Sprintf("payment %s: %d refunded through Stripe, its order %s refunded %d", p.ID, p.RefundedCents, orders[0].PublicID, orders[0].RefundedCents))
		default:
			charges[s.charge] = true
			ordered++
		}
	}
	var live []models.Order
	w.c.db.Where("payment_model = ? AND environment = ?", models.PaymentHosted, models.EnvLive).Find(&live)
	for _, o := range live {
		if !charges[o.ExternalPaymentRef] {
			problems = append(problems, fmt.Sprintf("live hosted order %s is of %q, which Stripe did not take", o.PublicID, o.ExternalPaymentRef))
		}
	}
	notices := w.scalar(`SELECT count(*) FROM payment_events`)
	refunds := w.scalar(`SELECT count(*) FROM refunds r JOIN orders o ON o.public_id = r.order_id WHERE o.environment = ? AND r.card_status = 'sent'`, models.EnvLive)
	return fmt.Sprintf("%d payments on Stripe's page: %d with their order, %d of another amount refunded, %d expired; %d notices kept, %d live hosted orders, %d refunds sent through Stripe",
		len(sales), ordered, returned, expired, notices, len(live), refunds), problems
}

// checkListings: no listing has two live orders, a listing is sold
// exactly when it has a live order, and no name is for sale after a push
// of it succeeded.
func checkListings(w *chaosWorld) (string, []string) {
	var problems []string
	doubled := w.scalar(`SELECT count(*) FROM (SELECT listing_id FROM orders WHERE status NOT IN ('REFUNDED', 'CANCELLED') GROUP BY listing_id HAVING count(*) > 1) d`)
	if doubled > 0 {
		problems = append(problems, fmt.Sprintf("%d listings have two live orders", doubled))
	}
	live := `EXISTS (SELECT 1 FROM orders o WHERE o.listing_id = l.id AND o.status NOT IN ('REFUNDED', 'CANCELLED'))`
	for _, table := range []string{"sandbox_listings", "listings"} {
		if n := w.scalar(`SELECT count(*) FROM ` + table + ` l WHERE (l.sold_at IS NOT NULL) <> ` + live); n > 0 {
			problems = append(problems, fmt.Sprintf("%d %s are sold without a live order, or for sale with one", n, table))
		}
	}
	pushed := w.scalar(`SELECT count(DISTINCT o.listing_id) FROM orders o JOIN order_steps s ON s.order_id = o.public_id AND s.event = 'transfer.completed'`)
	resold := w.scalar(`SELECT count(DISTINCT o.listing_id) FROM orders o JOIN order_steps s ON s.order_id = o.public_id AND s.event = 'transfer.completed'
		JOIN sandbox_listings l ON l.id = o.listing_id WHERE l.sold_at IS NULL OR o.status NOT IN ('TRANSFER_COMPLETED', 'SETTLED')`)
	if resold > 0 {
		problems = append(problems, fmt.Sprintf("%d pushed names are for sale again or their orders moved on", resold))
	}
	sold := w.scalar(`SELECT (SELECT count(*) FROM sandbox_listings WHERE sold_at IS NOT NULL) + (SELECT count(*) FROM listings WHERE sold_at IS NOT NULL)`)
	return fmt.Sprintf("%d listings sold, %d doubled; %d pushed, %d of them for sale again", sold, doubled, pushed, resold), problems
}

// checkSettlement: an order is settled once, after its transfer
// completed, never after a full refund.
func checkSettlement(w *chaosWorld) (string, []string) {
	var problems []string
	twice := w.scalar(`SELECT count(*) FROM (SELECT order_id FROM order_steps WHERE event = 'order.settled' GROUP BY order_id HAVING count(*) > 1) t`)
	if twice > 0 {
		problems = append(problems, fmt.Sprintf("%d orders settled more than once", twice))
	}
	early := w.scalar(`SELECT count(*) FROM order_steps s JOIN orders o ON o.public_id = s.order_id WHERE s.event = 'order.settled' AND (o.transfer_completed_at IS NULL
		OR NOT EXISTS (SELECT 1 FROM order_steps d WHERE d.order_id = s.order_id AND d.event = 'order.transfer_completed' AND d.id < s.id))`)
	if early > 0 {
		problems = append(problems, fmt.Sprintf("%d orders settled before their transfer completed", early))
	}
	refunded := w.scalar(`SELECT count(*) FROM orders WHERE settled_period IS NOT NULL AND (refunded_cents >= sale_price_cents OR status <> 'SETTLED')`)
	if refunded > 0 {
		problems = append(problems, fmt.Sprintf("%d settled orders are refunded in full or not SETTLED", refunded))
	}
	settled := w.scalar(`SELECT count(*) FROM orders WHERE status = 'SETTLED'`)
	runs := w.scalar(`SELECT count(*) FROM settlement_runs WHERE status = 'done'`)
	return fmt.Sprintf("%d orders settled by %d runs; %d twice, %d early, %d refunded", settled, runs, twice, early, refunded), problems
}

// orderState is an order as its events tell it.
type orderState struct {
	status     string
	review     bool // held for manual review
	push       string
	refunded   int64
	terminated bool
}

// Push states of orderState.
const (
	pushNone   = ""
	pushQueued = "queued"
	pushAsked  = "asked"
	pushDone   = "done"
	pushFailed = "failed"
	// pushUnconfirmed is a push the registry left unknown, in flight
	// until ops record fail-transfer (or confirm-delivery).
	pushUnconfirmed = "unconfirmed"
)

// chaosEvent is an event of an order as the history holds it.
type chaosEvent struct {
	ID    string
	Type  string
	Order struct {
		Status        string `json:"status"`
		Review        string `json:"review"`
		RefundedCents int64  `json:"refunded_cents"`
	}
}

// checkEvents replays each order's events through its state table (SPEC
// §3.1, §6.2): each event must be a move its state allows, and the order
// it carries the state after the move; the last state is the order's; the
// events are its timeline's; and every event reached the receiver.
func checkEvents(w *chaosWorld) (string, []string) {
	var orders []models.Order
	if err := w.c.db.Find(&orders).Error; err != nil {
		w.t.Fatal(err)
	}
	var problems []string
	events, missed := 0, 0
	for _, o := range orders {
		var rows []models.Event
		if err := w.c.db.Raw(`SELECT e.* FROM events e JOIN webhook_deliveries d ON d.event_seq = e.seq WHERE d.subject = ? ORDER BY e.seq`,
			o.PublicID).Scan(&rows).Error; err != nil {
			w.t.Fatal(err)
		}
		var st orderState
		for k, row := range rows {
			var ev chaosEvent
			var data struct {
				Order json.RawMessage `json:"order"`
			}
			json.Unmarshal(row.Data, &data)
			json.Unmarshal(data.Order, &ev.Order)
			ev.ID, ev.Type = row.ID, row.Type
			events++
			if !w.receiver.got(row.ID) {
				missed++
				problems = append(problems, fmt.Sprintf("event %s (%s of %s) never reached the receiver", row.ID, row.Type, o.PublicID))
			}
			if why := st.apply(k, ev); why != "" {
				problems = append(problems, fmt.Sprintf("order %s, event %d %s: %s", o.PublicID, k+1, ev.Type, why))
				break
			}
		}
		if st.status != o.Status || st.refunded != o.RefundedCents {
			problems = append(problems, fmt.Sprintf("order %s is %s with %d refunded; its events say %s with %d", o.PublicID, o.Status, o.RefundedCents, st.status, st.refunded))
		}
		var steps int64
		w.c.db.Model(&models.OrderStep{}).Where("order_id = ? AND event <> ''", o.PublicID).Count(&steps)
		if steps != int64(len(rows)) {
			problems = append(problems, fmt.Sprintf("order %s has %d events and %d steps with an event", o.PublicID, len(rows), steps))
		}
	}
	return fmt.Sprintf("%d orders, %d events replayed, %d never delivered", len(orders), events, missed), problems
}

// apply moves s by the k-th event ev, or says why ev is not a move s
// allows.
func (s *orderState) apply(k int, ev chaosEvent) string {
	live := s.status == models.OrderExternallyPaid || s.status == models.OrderPaid
	refundable := live || (s.status == models.OrderTransferInProgress && (s.push == pushFailed || s.push == pushNone))
	next := *s
	switch {
	case k == 0 && (ev.Type == "order.recorded" || ev.Type == "order.paid"):
		next.status, next.review = ev.Order.Status, ev.Order.Review == models.ReviewPending
		if (ev.Type == "order.recorded") != (next.status == models.OrderExternallyPaid) || (ev.Type == "order.paid") != (next.status == models.OrderPaid) {
			return "the first event's status is " + next.status
		}
	case k == 0:
		return "an order's first event must be order.recorded or order.paid"
	case s.terminated:
		return "an event after the order was refunded or cancelled"
	case ev.Type == "order.manual_review_cleared" && live && s.review:
		next.review = false
	case ev.Type == "order.transfer_started" && ((live && !s.review) || (s.status == models.OrderTransferInProgress && s.push == pushFailed)):
		next.status, next.push = models.OrderTransferInProgress, pushQueued
	case ev.Type == "transfer.requested" && s.status == models.OrderTransferInProgress && s.push == pushQueued:
		next.push = pushAsked
	case ev.Type == "transfer.completed" && (s.push == pushAsked || s.push == pushUnconfirmed):
		next.push = pushDone
	case ev.Type == "transfer.unconfirmed" && s.push == pushAsked:
		next.push = pushUnconfirmed
	case ev.Type == "transfer.failed" && (s.push == pushAsked || s.push == pushUnconfirmed):
		next.push = pushFailed
	case ev.Type == "order.transfer_completed" && s.status == models.OrderTransferInProgress:
		next.status = models.OrderTransferCompleted
	case ev.Type == "order.partially_refunded" && refundable && ev.Order.RefundedCents > s.refunded:
		next.refunded = ev.Order.RefundedCents
	case ev.Type == "order.refunded" && refundable:
		next.status, next.refunded, next.terminated = ev.Order.Status, ev.Order.RefundedCents, true
		if next.status != models.OrderRefunded && next.status != models.OrderCancelled {
			return "order.refunded leaves the order " + next.status
		}
	case ev.Type == "order.settled" && s.status == models.OrderTransferCompleted:
		next.status = models.OrderSettled
	default:
		return fmt.Sprintf("not a move from %s (review held %v, push %q)", s.status, s.review, s.push)
	}
	if ev.Order.Status != next.status {
		return fmt.Sprintf("the event's order is %s, the move makes it %s", ev.Order.Status, next.status)
	}
	if ev.Order.RefundedCents != next.refunded && k > 0 {
		return fmt.Sprintf("the event's order has %d refunded, the moves %d", ev.Order.RefundedCents, next.refunded)
	}
	*s = next
	return ""
}
