package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/models"
)

// sandboxOrder lists domain in the sandbox and records a partner's order
// of it at price.
func sandboxOrder(t *testing.T, env *testEnv, partnerID, domain string, price int64) order.View {
	t.Helper()
	l := models.SandboxListing{ID: models.NewID(), Domain: domain, TLD: domain[strings.LastIndexByte(domain, '.')+1:],
		BINCents: &price, Currency: "USD", CreatedAt: env.now}
	if err := env.db.Create(&l).Error; err != nil {
		t.Fatal(err)
	}
	o, err := env.srv.orders.Record(context.Background(), partnerID, models.EnvSandbox, order.NewOrder{Domain: domain, ExpectedPrice: &price,
		Currency: "USD", ExternalPaymentRef: "pay_1", Buyer: &order.Buyer{Email: "b@example.com", Name: "B", Country: "DE"}})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestOpsMoveOrders: ops take an order through review, transfer and
// delivery; a move from the wrong status is a conflict naming it.
func TestOpsMoveOrders(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	o := sandboxOrder(t, env, "prt_a", "bigsale.com", 750_000)
	if o.Review != models.ReviewPending {
		t.Fatalf("a $7,500 order has review %q, want pending", o.Review)
	}
	path := "/api/ops/orders/" + o.PublicID
	w := opsRequest(env, "POST", path+"/start-transfer", `{"recipient":"buyer-registrar"}`)
	wantError(t, "transfer before review", w, 409, "conflict")
	wantError(t, "transfer without a recipient", opsRequest(env, "POST", path+"/start-transfer", `{}`), 400, "validation_error")
	w = opsRequest(env, "POST", path+"/confirm-delivery", "")
	if wantError(t, "delivery before transfer", w, 409, "conflict"); !strings.Contains(w.Body.String(), "EXTERNALLY_PAID") {
		t.Errorf("conflict %s does not name the status", w.Body)
	}
	var v order.View
	for _, step := range []struct{ action, body, status string }{
		{"clear-review", "", models.OrderExternallyPaid},
		{"start-transfer", `{"recipient":"buyer-registrar"}`, models.OrderTransferInProgress},
		{"confirm-delivery", "", models.OrderTransferCompleted},
	} {
		opsJSON(t, env, "POST", path+"/"+step.action, step.body, 200, &v)
		if v.Status != step.status {
			t.Errorf("after %s: %s, want %s", step.action, v.Status, step.status)
		}
	}
	if v.TransferCompletedAt == nil || len(v.Timeline) != 4 {
		t.Errorf("delivered order = %+v", v)
	}
	wantError(t, "cancel after delivery", opsRequest(env, "POST", path+"/cancel", ""), 409, "conflict")
	wantError(t, "unknown order", opsRequest(env, "POST", "/api/ops/orders/ord_nosuch/cancel", ""), 404, "not_found")
	opsJSON(t, env, "GET", path, "", 200, &v)
	if v.PublicID != o.PublicID || len(v.Timeline) != 4 {
		t.Errorf("ops detail = %+v", v)
	}
}

// TestOpsListOrders lists across partners with filters.
func TestOpsListOrders(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	a := sandboxOrder(t, env, "prt_a", "one.com", 1_000)
	sandboxOrder(t, env, "prt_b", "two.com", 1_000)
	var list struct {
		Orders []order.View `json:"orders"`
	}
	opsJSON(t, env, "GET", "/api/ops/orders", "", 200, &list)
	if len(list.Orders) != 2 {
		t.Errorf("%d orders, want both partners'", len(list.Orders))
	}
	opsJSON(t, env, "GET", "/api/ops/orders?partner_id=prt_a&environment=sandbox", "", 200, &list)
	if len(list.Orders) != 1 || list.Orders[0].PublicID != a.PublicID {
		t.Errorf("prt_a's orders = %+v", list.Orders)
	}
	wantError(t, "bad environment", opsRequest(env, "GET", "/api/ops/orders?environment=prod", ""), 400, "validation_error")
	if w := env.request("GET", "/api/ops/orders", ""); w.Code != 401 {
		t.Errorf("without the ops login = %d, want 401", w.Code)
	}
}

// TestAQuoteLocksTheListingForV1: while a partner's quote holds a live
// listing, the developer API's availability says locked; once the window
// passes it is for sale again, and once sold it is gone.
func TestAQuoteLocksTheListingForV1(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := newBrowser(t, env)
	csrf := b.signUp("dev@example.com", "developer-pw")
	_, body := b.json("POST", "/api/v1/keys", `{}`, HeaderCSRFToken, csrf)
	var k newKeyResponse
	if err := json.Unmarshal([]byte(body), &k); err != nil {
		t.Fatal(err)
	}
	price := int64(5000)
	l := models.Listing{ID: models.NewID(), Domain: "quoted.io", TLD: "io", BINCents: &price, Currency: "USD",
		Approved: true, MarketplaceVisible: true, CreatedAt: env.now}
	if err := env.db.Create(&l).Error; err != nil {
		t.Fatal(err)
	}
	available := func() string {
		w := env.request("GET", "/api/v1/domains/available?domain=quoted.io", "", "x-api-key", k.Key, "x-api-secret", k.Secret)
		return strings.TrimSpace(w.Body.String())
	}
	ctx := context.Background()
	if _, err := env.srv.orders.Quote(ctx, "prt_a", models.EnvLive, "quoted.io"); err != nil {
		t.Fatal(err)
	}
	if got := available(); !strings.Contains(got, `"available":false,"locked":true`) {
		t.Errorf("while quoted: %s, want locked", got)
	}
	env.now = env.now.Add(11 * time.Minute)
	if got := available(); !strings.Contains(got, `"available":true,"locked":false`) {
		t.Errorf("after the quote's window: %s, want for sale", got)
	}
	if _, err := env.srv.orders.Record(ctx, "prt_b", models.EnvLive, order.NewOrder{Domain: "quoted.io", ExpectedPrice: &price,
		Currency: "USD", ExternalPaymentRef: "pay_1", Buyer: &order.Buyer{Email: "b@example.com", Name: "B", Country: "FR"}}); err != nil {
		t.Fatal(err)
	}
	if got := available(); !strings.Contains(got, `"available":false,"locked":false`) {
		t.Errorf("once sold: %s, want not available", got)
	}
}
