package api

import (
	"context"
	"encoding/json"
	"html"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/registry/sandbox"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// runPushes runs the queued transfer:push tasks of orderID, each until it
// ends, against the sandbox registry, as the worker would.
func runPushes(t *testing.T, env *testEnv, orderID string) {
	t.Helper()
	var entries []models.OutboxEntry
	env.db.Where("task_type = ?", tasks.TypeTransferPush).Find(&entries)
	reg := sandbox.New(env.db, 0)
	for _, e := range entries {
		var p tasks.TransferPushPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil || p.OrderID != orderID {
			continue
		}
		for attempt := 0; env.srv.svc.Orders.Push(context.Background(), p, reg, false) != nil; attempt++ {
			if attempt == 3 {
				t.Fatalf("push %d of %s did not end", p.Push, orderID)
			}
		}
	}
}

// sandboxOrder lists domain in the sandbox and records a partner's order
// of it at price.
func sandboxOrder(t *testing.T, env *testEnv, partnerID, domain string, price int64) order.View {
	t.Helper()
	ensurePartner(t, env, partnerID)
	l := models.SandboxListing{ID: models.NewID(), Domain: domain, TLD: domain[strings.LastIndexByte(domain, '.')+1:],
		BINCents: &price, Currency: "USD", CreatedAt: env.now}
	if err := env.db.Create(&l).Error; err != nil {
		t.Fatal(err)
	}
	o, err := env.srv.svc.Orders.Record(context.Background(), partnerID, models.EnvSandbox, order.NewOrder{Domain: domain, ExpectedPrice: &price,
		Currency: "USD", ExternalPaymentRef: "pay_1", Buyer: &order.Buyer{Email: "b@example.com", Name: "B", Country: "DE"}})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// ensurePartner makes partner id (at the default 15 %) unless it exists.
func ensurePartner(t *testing.T, env *testEnv, id string) {
	t.Helper()
	if err := env.db.FirstOrCreate(&models.Partner{ID: id, Status: "approved", CommissionBPS: 1500, CreatedAt: env.now}).Error; err != nil {
		t.Fatal(err)
	}
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
		if step.action == "start-transfer" { // its push is queued, not unconfirmed
			w := opsRequest(env, "POST", path+"/fail-transfer", "")
			if wantError(t, "fail-transfer of a queued push", w, 409, "conflict"); !strings.Contains(w.Body.String(), "unconfirmed") {
				t.Errorf("conflict %s does not say what fail-transfer is for", w.Body)
			}
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
	k := developerKey(t, env)
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
	ensurePartner(t, env, "prt_a")
	if _, err := env.srv.svc.Orders.Quote(ctx, "prt_a", models.EnvLive, "quoted.io"); err != nil {
		t.Fatal(err)
	}
	if got := available(); !strings.Contains(got, `"available":false,"locked":true`) {
		t.Errorf("while quoted: %s, want locked", got)
	}
	env.now = env.now.Add(11 * time.Minute)
	if got := available(); !strings.Contains(got, `"available":true,"locked":false`) {
		t.Errorf("after the quote's window: %s, want for sale", got)
	}
	ensurePartner(t, env, "prt_b")
	if _, err := env.srv.svc.Orders.Record(ctx, "prt_b", models.EnvLive, order.NewOrder{Domain: "quoted.io", ExpectedPrice: &price,
		Currency: "USD", ExternalPaymentRef: "pay_1", Buyer: &order.Buyer{Email: "b@example.com", Name: "B", Country: "FR"}}); err != nil {
		t.Fatal(err)
	}
	if got := available(); !strings.Contains(got, `"available":false,"locked":false`) {
		t.Errorf("once sold: %s, want not available", got)
	}
}

// opsForm posts a form of the ops pages with the ops login, as the
// page's own origin.
func opsForm(env *testEnv, path string, form url.Values) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.SetBasicAuth("ops", "ops-secret")
	return env.do(r)
}

// afterForm is the page a form's answer w sends the browser back to, asked
// with the cookies the answer set, as a browser asks it.
func afterForm(env *testEnv, w *httptest.ResponseRecorder) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", w.Header().Get("Location"), nil)
	for _, ck := range w.Result().Cookies() {
		r.AddCookie(ck)
	}
	r.SetBasicAuth("ops", "ops-secret")
	return env.do(r)
}

// TestOpsOrdersPage: the page lists orders with the moves their status
// allows; its forms move them, and a refused move shows why.
func TestOpsOrdersPage(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	held := sandboxOrder(t, env, "prt_a", "heldsale.com", 900_000)
	small := sandboxOrder(t, env, "prt_b", "smallsale.com", 1_000)
	w := opsRequest(env, "GET", "/ops/orders", "")
	page := w.Body.String()
	if w.Code != 200 || !strings.Contains(page, "heldsale.com") || !strings.Contains(page, "smallsale.com") ||
		!strings.Contains(page, `action="/ops/orders/`+held.PublicID+`/clear-review"`) ||
		strings.Contains(page, `action="/ops/orders/`+held.PublicID+`/start-transfer"`) ||
		!strings.Contains(page, `action="/ops/orders/`+small.PublicID+`/start-transfer"`) {
		t.Fatalf("page = %d:\n%s", w.Code, page)
	}
	w = opsForm(env, "/ops/orders/"+small.PublicID+"/start-transfer", url.Values{"recipient": {"buyer-registrar"}})
	if w.Code != 303 || w.Header().Get("Location") != "/ops/orders" {
		t.Fatalf("start-transfer form = %d %s", w.Code, w.Header().Get("Location"))
	}
	if page := afterForm(env, w).Body.String(); !strings.Contains(page, `<p class="notice" role="status">`+small.PublicID+": start-transfer, now "+models.OrderTransferInProgress+"</p>") {
		t.Errorf("the page after the form:\n%s", page)
	}
	if page := opsRequest(env, "GET", "/ops/orders?done=All+orders+refunded", "").Body.String(); strings.Contains(page, "refunded") || strings.Contains(page, `class="notice"`) {
		t.Errorf("a link's done= shows a notice:\n%s", page)
	}
	v, _ := env.srv.svc.Orders.Ops(context.Background(), small.PublicID)
	if v.Status != models.OrderTransferInProgress {
		t.Errorf("after the form: %s", v.Status)
	}
	w = opsForm(env, "/ops/orders/"+held.PublicID+"/confirm-delivery", nil)
	if w.Code != 409 || !strings.Contains(w.Body.String(), "EXTERNALLY_PAID") || !strings.Contains(w.Body.String(), `id="orders"`) {
		t.Errorf("a refused move = %d, want the page again with why:\n%s", w.Code, w.Body)
	}
	if w := opsForm(env, "/ops/orders/"+held.PublicID+"/teleport", nil); w.Code != 404 {
		t.Errorf("an unknown move = %d, want 404", w.Code)
	}
	r := httptest.NewRequest("POST", "/ops/orders/"+held.PublicID+"/cancel", nil)
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	r.SetBasicAuth("ops", "ops-secret")
	if w := env.do(r); w.Code != 403 {
		t.Errorf("a cross-site form = %d, want 403", w.Code)
	}
	if v, _ := env.srv.svc.Orders.Ops(context.Background(), held.PublicID); v.Status != models.OrderExternallyPaid {
		t.Errorf("after refusals the held order is %s", v.Status)
	}
	// A push the registry left unconfirmed is marked, and only its row
	// offers fail-transfer.
	lost := sandboxOrder(t, env, "prt_b", "lostanswer.com", 1_000)
	opsForm(env, "/ops/orders/"+lost.PublicID+"/start-transfer", url.Values{"recipient": {sandbox.LosingRecipient}})
	runPushes(t, env, lost.PublicID)
	runPushes(t, env, small.PublicID)
	page = opsRequest(env, "GET", "/ops/orders", "").Body.String()
	if strings.Count(page, "push unconfirmed") != 1 || strings.Count(page, `/fail-transfer"`) != 1 ||
		!strings.Contains(page, `action="/ops/orders/`+lost.PublicID+`/fail-transfer"`) {
		t.Errorf("the page with one push unconfirmed:\n%s", page)
	}
	if w := env.request("GET", "/ops/orders", ""); w.Code != 401 {
		t.Errorf("without the ops login = %d, want 401", w.Code)
	}
}

// The ops orders page names each order's partner, filters as the ops API
// does, and pages with the API's cursor, keeping the filters.
func TestOpsOrdersPageFiltersAndPages(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	ctx := context.Background()
	acme, err := env.srv.svc.Partners.Create(ctx, "Acme Registrar", "ops@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	first := sandboxOrder(t, env, acme.ID, "acme-one.com", 1_000)
	env.now = env.now.Add(time.Minute)
	second := sandboxOrder(t, env, acme.ID, "acme-two.com", 1_000)
	other := sandboxOrder(t, env, "prt_other", "other-sale.com", 1_000)

	page := opsRequest(env, "GET", "/ops/orders?partner_id="+acme.ID+"&limit=1", "").Body.String()
	if !strings.Contains(page, second.PublicID) || strings.Contains(page, first.PublicID) || strings.Contains(page, other.PublicID) ||
		!strings.Contains(page, `<td class="partner" data-label="Partner">Acme Registrar</td>`) || !strings.Contains(page, `rel="next"`) {
		t.Fatalf("first page of Acme's orders:\n%s", page)
	}
	next := page[strings.Index(page, `href="/ops/orders?`)+len(`href="`):]
	next = html.UnescapeString(next[:strings.IndexByte(next, '"')])
	if !strings.Contains(next, "partner_id="+acme.ID) {
		t.Errorf("the next page's link %q drops the partner filter", next)
	}
	page = opsRequest(env, "GET", next, "").Body.String()
	if !strings.Contains(page, first.PublicID) || strings.Contains(page, second.PublicID) || strings.Contains(page, other.PublicID) {
		t.Errorf("second page of Acme's orders:\n%s", page)
	}
	page = opsRequest(env, "GET", "/ops/orders?domain=OTHER-SALE.com", "").Body.String()
	if !strings.Contains(page, other.PublicID) || strings.Contains(page, first.PublicID) || !strings.Contains(page, `<td class="partner" data-label="Partner">prt_other</td>`) {
		t.Errorf("orders of other-sale.com:\n%s", page)
	}
	if w := opsRequest(env, "GET", "/ops/orders?environment=moon", ""); w.Code != 400 || !strings.Contains(w.Body.String(), "environment must be sandbox or live") {
		t.Errorf("a bad filter = %d:\n%s", w.Code, w.Body)
	}
	if page := opsRequest(env, "GET", "/ops/orders?status=SETTLED", "").Body.String(); !strings.Contains(page, "No orders match these filters") {
		t.Errorf("no settled orders:\n%s", page)
	}
}

// An ops person clears a held order's review and starts its transfer on
// the page, in a real browser.
func TestBrowserOpsOrders(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := opsChromium(t)
	o := sandboxOrder(t, env, "prt_a", "browserheld.com", 900_000)
	row := "#" + o.PublicID
	steps := chromedp.Steps(
		chromedp.Navigate(srv.URL+"/ops/orders"),
		chromedp.WaitVisible(chromedp.CSS(row)),
		chromedp.Click(chromedp.CSS(row+` form[action$="/clear-review"] button`)),
		chromedp.WaitVisible(chromedp.CSS(row+` form[action$="/start-transfer"]`)),
		chromedp.SendKeys(chromedp.CSS(row+` input[name="recipient"]`), "buyer-registrar"),
		chromedp.Click(chromedp.CSS(row+` form[action$="/start-transfer"] button`)),
		chromedp.WaitVisible(chromedp.CSS(row+` form[action$="/confirm-delivery"]`)), // a move TRANSFER_IN_PROGRESS allows
	)
	if err := chromedp.Do(ctx, steps); err != nil {
		t.Fatalf("the ops orders page: %v", err)
	}
	checkPage(t, ctx, "ops-orders")
	// At a desktop's width the row's moves are in view, not past the
	// table's right edge, where its overflow scrolls them out of sight.
	movesInView := func(row string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
			t.Fatal(err)
		}
		hidden, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
			const edge = document.querySelector("table").getBoundingClientRect().right;
			return Array.from(document.querySelectorAll("`+row+` button")).filter(b => b.getBoundingClientRect().right > edge).map(b => b.textContent);
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if len(hidden) > 0 {
			t.Errorf("at 1280 px the moves %v of %s are past the table's right edge", hidden, row)
		}
		if err := chromedp.Do(ctx, chromedp.EmulateReset()); err != nil {
			t.Fatal(err)
		}
	}
	movesInView(row)
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(row+" .status")))
	if err != nil {
		t.Fatal(err)
	}
	if status != models.OrderTransferInProgress {
		t.Errorf("the page shows %s, want TRANSFER_IN_PROGRESS", status)
	}

	// A push made but unanswered, then refused on its retry: the row says
	// so, and ops, having looked at the registry, record it failed.
	lost := sandboxOrder(t, env, "prt_a", "browserlost.com", 1_000)
	lostRow := "#" + lost.PublicID
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/ops/orders"), chromedp.WaitVisible(chromedp.CSS(lostRow)),
		chromedp.SendKeys(chromedp.CSS(lostRow+` input[name="recipient"]`), sandbox.LosingRecipient),
		chromedp.Click(chromedp.CSS(lostRow+` form[action$="/start-transfer"] button`)),
		chromedp.WaitVisible(chromedp.CSS(lostRow+` form[action$="/confirm-delivery"]`))); err != nil {
		t.Fatalf("start-transfer to %s: %v", sandbox.LosingRecipient, err)
	}
	runPushes(t, env, lost.PublicID)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/ops/orders"), chromedp.WaitVisible(chromedp.CSS(lostRow+" .unconfirmed"))); err != nil {
		t.Fatalf("the unconfirmed push's row: %v", err)
	}
	checkPage(t, ctx, "ops-orders-unconfirmed")
	movesInView(lostRow)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(lostRow+` form[action$="/fail-transfer"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`))); err != nil {
		t.Fatalf("fail-transfer: %v", err)
	}
	notice, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("p.notice")))
	if err != nil || !strings.Contains(notice, lost.PublicID+": fail-transfer") {
		t.Errorf("the notice after fail-transfer = %q, %v", notice, err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.CSS(lostRow+" .unconfirmed"))); err != nil {
		t.Errorf("the row still says unconfirmed: %v", err)
	}
}
