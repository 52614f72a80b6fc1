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
