package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/models"
)

// payments puts payments of every status in the database, one a minute
// from env's clock back, and returns them newest first.
func seedPayments(t *testing.T, env *testEnv) []models.Payment {
	t.Helper()
	order, refund := "ord_paid", "re_test_1"
	var out []models.Payment
	for i, st := range []string{models.PaymentPending, models.PaymentSucceeded, models.PaymentFailed, models.PaymentRefunded, models.PaymentSucceeded} {
		at := env.now.Add(-time.Duration(i) * time.Minute)
		p := models.Payment{ID: fmt.Sprintf("pay_%d", i), Provider: "sandbox", SessionID: fmt.Sprintf("cs_%d", i), PartnerID: "prt_a",
			Environment: models.EnvSandbox, Domain: fmt.Sprintf("paid%d.com", i), IdempotencyKey: fmt.Sprintf("pay_%d", i),
			AmountCents: int64(1000 * (i + 1)), Currency: "USD", Status: st, CreatedAt: at, UpdatedAt: at}
		if st != models.PaymentPending && st != models.PaymentFailed {
			p.ChargeID = new(fmt.Sprintf("ch_test_%d", i))
		}
		switch i {
		case 1:
			p.OrderID = &order
		case 3:
			p.RefundedCents, p.RefundID = p.AmountCents, refund
		}
		if err := env.db.Create(&p).Error; err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

type paymentsPage struct {
	Payments []struct {
		ID       string  `json:"id"`
		ChargeID *string `json:"charge_id"`
		Status   string  `json:"status"`
		OrderID  *string `json:"order_id"`
		RefundID *string `json:"refund_id"`
		Amount   int64   `json:"amount_cents"`
		Session  string  `json:"session_id"`
	} `json:"payments"`
	NextCursor *string `json:"next_cursor"`
}

func TestOpsPaymentsList(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedPayments(t, env)
	get := func(query string) (int, paymentsPage, string) {
		t.Helper()
		rec := opsFrom(env, "GET", "/api/ops/payments"+query, "", "192.0.2.10")
		var page paymentsPage
		if rec.Code == http.StatusOK {
			if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
		}
		return rec.Code, page, rec.Body.String()
	}
	ids := func(p paymentsPage) string {
		var out []string
		for _, x := range p.Payments {
			out = append(out, x.ID)
		}
		return strings.Join(out, " ")
	}

	code, page, body := get("?limit=2")
	if code != 200 || ids(page) != "pay_0 pay_1" || page.NextCursor == nil {
		t.Fatalf("first page = %d %s", code, body)
	}
	if p := page.Payments[1]; p.ChargeID == nil || *p.ChargeID != "ch_test_1" || p.OrderID == nil || *p.OrderID != "ord_paid" || p.Session != "cs_1" || p.Amount != 2000 {
		t.Errorf("the paid payment = %+v", p)
	}
	if _, next, _ := get("?limit=2&cursor=" + *page.NextCursor); ids(next) != "pay_2 pay_3" {
		t.Errorf("second page = %s", ids(next))
	}
	for query, want := range map[string]string{
		"?status=succeeded":              "pay_1 pay_4",
		"?status=refunded":               "pay_3",
		"?order_id=ord_paid":             "pay_1",
		"?session_id=cs_2":               "pay_2",
		"?from=2026-11-22T11:57:00Z":     "pay_0 pay_1 pay_2 pay_3",
		"?to=2026-11-22T11:58:00Z":       "pay_3 pay_4",
		"?from=2026-11-22&to=2026-11-22": "pay_0 pay_1 pay_2 pay_3 pay_4",
		"?from=2026-11-23":               "",
	} {
		if code, p, body := get(query); code != 200 || ids(p) != want {
			t.Errorf("%s = %d %s, want %q", query, code, body, want)
		}
	}
	if _, p, _ := get("?status=refunded"); p.Payments[0].RefundID == nil || *p.Payments[0].RefundID != "re_test_1" {
		t.Errorf("the refunded payment = %+v, want its refund id", p.Payments[0])
	}

	for query, field := range map[string]string{
		"?status=paid":                         "status",
		"?from=yesterday":                      "from",
		"?to=2026-13-40":                       "to",
		"?limit=0":                             "limit",
		"?limit=201":                           "limit",
		"?order_id=" + strings.Repeat("x", 41): "order_id",
	} {
		code, _, body := get(query)
		if code != 400 || !strings.Contains(body, `"field":"`+field+`"`) {
			t.Errorf("%s = %d %s, want 400 naming %s", query, code, body, field)
		}
	}
	if code, _, body := get("?status=failed&cursor=" + *page.NextCursor); code != 400 || !strings.Contains(body, "invalid_cursor") {
		t.Errorf("a cursor of other filters = %d %s", code, body)
	}
	r, _ := http.NewRequest("GET", "/api/ops/payments", nil)
	if rec := env.do(r); rec.Code != 401 {
		t.Errorf("without the ops login = %d", rec.Code)
	}
}

// The ops page shows the payments with the totals of everything the
// filters select, not only the page.
func TestOpsPaymentsPage(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedPayments(t, env)
	rec := opsFrom(env, "GET", "/ops/payments?status=succeeded&limit=1", "", "192.0.2.11")
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, `id="pay_1"`) || strings.Contains(body, `id="pay_4"`) ||
		!strings.Contains(body, `<td class="count" data-label="Payments">2</td><td class="amount" data-label="Charged">70.00 USD</td>`) || !strings.Contains(body, "Older payments") {
		t.Errorf("payments page = %d\n%s", rec.Code, body)
	}
	rec = opsFrom(env, "GET", "/ops/payments?status=bogus", "", "192.0.2.11")
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "is not a payment status") {
		t.Errorf("a bad filter on the page = %d", rec.Code)
	}
}

// seedBacklog puts work for ops in the database: a hosted order's
// refund whose card refund failed (rf_owed, 100.00 USD of ord_owed,
// owed.com), though the processor's notices count 100.00 USD refunded on
// its charge (pay_owed), and a charge without an order whose return was
// given up (pay_lost, 70.00 USD, lost.com).
func seedBacklog(t *testing.T, env *testEnv) {
	t.Helper()
	o := models.Order{PublicID: "ord_owed", PartnerID: "prt_a", Environment: models.EnvSandbox, ListingID: "l1", Domain: "owed.com",
		Status: models.OrderPaid, Review: models.ReviewNone, SalePriceCents: 30_000, Currency: "USD", PaymentModel: models.PaymentHosted,
		BuyerEmail: "b@example.com", BuyerName: "B", BuyerCountry: "NL", ExternalPaymentRef: "ch_test_owed", CreatedAt: env.now, UpdatedAt: env.now}
	rf := models.Refund{ID: "rf_owed", OrderID: o.PublicID, AmountCents: 10_000, Currency: "USD", Reason: "r", Actor: "partner",
		CardStatus: models.CardRefundFailed, CardError: "card expired", CreatedAt: env.now}
	charge := "ch_test_lost"
	p := models.Payment{ID: "pay_lost", Provider: "sandbox", SessionID: "cs_lost", PartnerID: "prt_a", Environment: models.EnvSandbox,
		Domain: "lost.com", IdempotencyKey: "pay_lost", AmountCents: 7_000, Currency: "USD", Status: models.PaymentSucceeded,
		ChargeID: &charge, Note: "pay it back by hand", ReturnGivenUpAt: &env.now, CreatedAt: env.now, UpdatedAt: env.now}
	owedCharge := "ch_test_owed"
	paid := models.Payment{ID: "pay_owed", Provider: "sandbox", SessionID: "cs_owed", PartnerID: "prt_a", Environment: models.EnvSandbox,
		Domain: "owed.com", IdempotencyKey: "pay_owed", AmountCents: 30_000, RefundedCents: 10_000, Currency: "USD",
		Status: models.PaymentPartiallyRefunded, ChargeID: &owedCharge, OrderID: &o.PublicID, CreatedAt: env.now, UpdatedAt: env.now}
	for _, row := range []any{&o, &rf, &p, &paid} {
		if err := env.db.Create(row).Error; err != nil {
			t.Fatal(err)
		}
	}
}

// The backlog lists what waits for ops, and each money kind leaves it
// when ops record how they paid it back by hand; a bad or repeated
// record is refused and changes nothing.
func TestOpsBacklogAndPaidByHand(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedBacklog(t, env)
	backlog := func(want string) {
		t.Helper()
		rec := opsRequest(env, "GET", "/api/ops/backlog", "")
		var got struct {
			Counts map[string]int64
			Items  []struct{ Kind, ID string }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); rec.Code != 200 || err != nil {
			t.Fatalf("backlog = %d %s", rec.Code, rec.Body)
		}
		line := fmt.Sprint(got.Counts)
		for _, it := range got.Items {
			line += " " + it.Kind + ":" + it.ID
		}
		if line != want {
			t.Errorf("backlog = %s, want %s", line, want)
		}
	}
	backlog("map[card_refund_failed:1 return_given_up:1 transfer_unconfirmed:0] card_refund_failed:rf_owed return_given_up:pay_lost")
	rec := opsRequest(env, "GET", "/api/ops/backlog", "")
	if !strings.Contains(rec.Body.String(), `"unmatched_refund_cents":10000`) {
		t.Errorf("the failed refund's item does not say the processor counts 10000 refunded that no refund sent explains: %s", rec.Body)
	}

	for _, path := range []string{"/api/ops/refunds/rf_owed/paid-by-hand", "/api/ops/payments/pay_lost/paid-by-hand"} {
		wantError(t, path+" without a reference", opsRequest(env, "POST", path, `{}`), 400, "validation_error")
		wantError(t, path+" with a control character", opsRequest(env, "POST", path, `{"reference":"wire\u00007"}`), 400, "validation_error")
		wantError(t, path+" with an unknown field", opsRequest(env, "POST", path, `{"reference":"wire-7","amount":1}`), 400, "validation_error")
	}
	wantError(t, "an unknown refund", opsRequest(env, "POST", "/api/ops/refunds/rf_none/paid-by-hand", `{"reference":"wire-7"}`), 404, "not_found")
	wantError(t, "an unknown payment", opsRequest(env, "POST", "/api/ops/payments/pay_none/paid-by-hand", `{"reference":"wire-7"}`), 404, "not_found")
	if w := env.request("POST", "/api/ops/refunds/rf_owed/paid-by-hand", `{"reference":"wire-7"}`); w.Code != 401 {
		t.Errorf("without the ops login = %d", w.Code)
	}
	backlog("map[card_refund_failed:1 return_given_up:1 transfer_unconfirmed:0] card_refund_failed:rf_owed return_given_up:pay_lost")

	rec = opsRequest(env, "POST", "/api/ops/refunds/rf_owed/paid-by-hand", `{"reference":"wire-7"}`)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"note":"refund rf_owed: 10000 cents paid back to the buyer by hand (wire-7)"`) {
		t.Errorf("refund paid by hand = %d %s, want the order with the step", rec.Code, rec.Body)
	}
	rec = opsRequest(env, "POST", "/api/ops/payments/pay_lost/paid-by-hand", `{"reference":"wire-8"}`)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"paid_by_hand_reference":"wire-8"`) {
		t.Errorf("payment paid back by hand = %d %s", rec.Code, rec.Body)
	}
	wantError(t, "the refund again, another reference", opsRequest(env, "POST", "/api/ops/refunds/rf_owed/paid-by-hand", `{"reference":"wire-9"}`), 409, "conflict")
	wantError(t, "a retry of the refund paid by hand", opsRequest(env, "POST", "/api/ops/refunds/rf_owed/retry", ""), 409, "conflict")
	wantError(t, "a retry of an unknown refund", opsRequest(env, "POST", "/api/ops/refunds/rf_none/retry", ""), 404, "not_found")
	backlog("map[card_refund_failed:0 return_given_up:0 transfer_unconfirmed:0]")

	// A failed card refund asked again is pending with its task, and off
	// the backlog while it runs.
	retried := models.Refund{ID: "rf_retried", OrderID: "ord_owed", AmountCents: 5_000, Currency: "USD", Reason: "r", Actor: "partner",
		CardStatus: models.CardRefundFailed, CardError: "processor down", CreatedAt: env.now}
	if err := env.db.Create(&retried).Error; err != nil {
		t.Fatal(err)
	}
	backlog("map[card_refund_failed:1 return_given_up:0 transfer_unconfirmed:0] card_refund_failed:rf_retried")
	rec = opsRequest(env, "POST", "/api/ops/refunds/rf_retried/retry", "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "refund rf_retried: giving 5000 cents back to the buyer's card asked again") {
		t.Errorf("retry = %d %s", rec.Code, rec.Body)
	}
	backlog("map[card_refund_failed:0 return_given_up:0 transfer_unconfirmed:0]")
	wantError(t, "a retry of a refund pending again", opsRequest(env, "POST", "/api/ops/refunds/rf_retried/retry", ""), 409, "conflict")
}
