package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/ledger/ledgertest"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/payout"
	"github.com/domaind/domaind/internal/settlement"
	"github.com/domaind/domaind/models"
)

// completedOrder is sandboxOrder taken by ops through transfer and
// delivery, ready to settle.
func completedOrder(t *testing.T, env *testEnv, partnerID, domain string, price int64) order.View {
	t.Helper()
	o := sandboxOrder(t, env, partnerID, domain, price)
	for _, action := range []string{"start-transfer", "confirm-delivery"} {
		if w := opsRequest(env, "POST", "/api/ops/orders/"+o.PublicID+"/"+action, `{"recipient":"buyer-registrar"}`); w.Code != 200 {
			t.Fatalf("%s = %d %s", action, w.Code, w.Body)
		}
	}
	return o
}

// Finance settles a closed week by hand over the ops API: an open week is
// refused, a time that starts no week names the week's start, the run is
// queued once, and, once run, shows the week's statement to the cent.
func TestOpsSettlementRun(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	ledgertest.CheckAtEnd(t, env.db)
	o := completedOrder(t, env, "prt_a", "settle-me.com", 10_000) // 15 %: 1,500 commission, 8,500 owed
	week := `{"period_start":"2026-11-16T00:00:00Z"}`             // Monday of env.now's week (Sunday 22nd)
	wantError(t, "an open week", opsRequest(env, "POST", "/api/ops/settlements/runs", week), 409, "conflict")
	env.now = time.Date(2026, 11, 23, 4, 0, 0, 0, time.UTC)
	tuesday := opsRequest(env, "POST", "/api/ops/settlements/runs", `{"period_start":"2026-11-17T00:00:00Z"}`)
	wantError(t, "a Tuesday", tuesday, 400, "validation_error")
	if !strings.Contains(tuesday.Body.String(), "2026-11-16T00:00:00Z") {
		t.Errorf("a Tuesday = %s, want the week's start named", tuesday.Body)
	}
	wantError(t, "no period", opsRequest(env, "POST", "/api/ops/settlements/runs", `{}`), 400, "validation_error")

	type runAnswer struct {
		ID        string `json:"id"`
		Status    string `json:"status"`
		StatusURL string `json:"status_url"`
	}
	rec := opsRequest(env, "POST", "/api/ops/settlements/runs", week)
	var run, again runAnswer
	if rec.Code != 202 || json.Unmarshal(rec.Body.Bytes(), &run) != nil || run.Status != models.RunQueued || rec.Header().Get("Location") != run.StatusURL {
		t.Fatalf("request = %d %s (Location %q)", rec.Code, rec.Body, rec.Header().Get("Location"))
	}
	if rec := opsRequest(env, "POST", "/api/ops/settlements/runs", week); json.Unmarshal(rec.Body.Bytes(), &again) != nil || again.ID != run.ID {
		t.Errorf("asking again = %s, want run %s", rec.Body, run.ID)
	}
	// The week's Monday as a date, as finance types it, is the same period.
	if rec := opsRequest(env, "POST", "/api/ops/settlements/runs", `{"period_start":"2026-11-16"}`); rec.Code != 202 ||
		json.Unmarshal(rec.Body.Bytes(), &again) != nil || again.ID != run.ID {
		t.Errorf("asking by date = %d %s, want run %s", rec.Code, rec.Body, run.ID)
	}
	for _, bad := range []string{`{"period_start":"16/11/2026"}`, `{"period_start":"2026-11-16T00:00"}`, `{"period_start":20261116}`} {
		wantError(t, "period_start "+bad, opsRequest(env, "POST", "/api/ops/settlements/runs", bad), 400, "validation_error")
	}
	if err := env.srv.svc.Settlements.Run(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	rec = opsRequest(env, "GET", "/api/ops/settlements/runs/"+run.ID, "")
	var got struct {
		Run        struct{ Status string }
		Statements []settlement.Statement
		Totals     []settlement.Total
	}
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &got) != nil || got.Run.Status != models.RunDone || len(got.Statements) != 1 || len(got.Totals) != 1 {
		t.Fatalf("run = %d %s", rec.Code, rec.Body)
	}
	st := got.Statements[0]
	if st.PartnerID != "prt_a" || st.Orders != 1 || st.GrossCents != 10_000 || st.CommissionCents != 1_500 || st.AmountOwedCents != 8_500 ||
		st.PayoutCents != 0 || got.Totals[0].GrossCents != 10_000 {
		t.Errorf("statement = %+v, totals %+v", st, got.Totals)
	}
	if v, _ := env.srv.svc.Orders.Ops(context.Background(), o.PublicID); v.Status != models.OrderSettled {
		t.Errorf("the order is %s after the run", v.Status)
	}
	var runs struct{ Runs []runAnswer }
	if rec := opsRequest(env, "GET", "/api/ops/settlements/runs", ""); rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &runs) != nil ||
		len(runs.Runs) != 1 || runs.Runs[0].ID != run.ID || runs.Runs[0].Status != models.RunDone {
		t.Errorf("runs = %d %s", rec.Code, rec.Body)
	}
	csvAnswer := opsRequest(env, "GET", "/api/ops/settlements/runs/"+run.ID+"/statements.csv", "")
	wantCSV := "period_start,period_end,partner_id,environment,currency,orders,gross_cents,refunds_cents,commission_cents,amount_owed_cents,referral_cents,payout_cents\n" +
		"2026-11-16T00:00:00Z,2026-11-23T00:00:00Z,prt_a,sandbox,USD,1,10000,0,1500,8500,0,0\n"
	if csvAnswer.Code != 200 || csvAnswer.Body.String() != wantCSV || !strings.HasPrefix(csvAnswer.Header().Get("Content-Type"), "text/csv") ||
		!strings.Contains(csvAnswer.Header().Get("Content-Disposition"), "settlement-2026-11-16.csv") ||
		csvAnswer.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("csv = %d %q %v", csvAnswer.Code, csvAnswer.Body, csvAnswer.Header())
	}
	wantError(t, "an unknown run", opsRequest(env, "GET", "/api/ops/settlements/runs/stl_nosuch", ""), 404, "not_found")
	wantError(t, "an unknown run's CSV", opsRequest(env, "GET", "/api/ops/settlements/runs/stl_nosuch/statements.csv", ""), 404, "not_found")
	if w := env.request("GET", "/api/ops/settlements/runs", ""); w.Code != 401 {
		t.Errorf("without the ops login = %d, want 401", w.Code)
	}
}

// Ops change a partner's rate, and make it an affiliate and not; orders
// made before keep their rate; a refused change changes nothing.
func TestOpsSetCommission(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	ledgertest.CheckAtEnd(t, env.db)
	before := sandboxOrder(t, env, "prt_a", "before-change.com", 10_000)
	wantError(t, "a rate over 100 %", opsRequest(env, "PATCH", "/api/ops/partners/prt_a", `{"commission_bps":10001}`), 400, "validation_error")
	wantError(t, "no rate", opsRequest(env, "PATCH", "/api/ops/partners/prt_a", `{}`), 400, "validation_error")
	wantError(t, "an unknown partner", opsRequest(env, "PATCH", "/api/ops/partners/prt_nosuch", `{"commission_bps":1000}`), 404, "not_found")
	if w := opsRequest(env, "PATCH", "/api/ops/partners/prt_a", `{"commission_bps":1250}`); w.Code != 200 || !strings.Contains(w.Body.String(), `"commission_bps":1250`) {
		t.Fatalf("set the rate = %d %s", w.Code, w.Body)
	}
	if w := opsRequest(env, "PATCH", "/api/ops/partners/prt_a", `{"affiliate":true,"commission_bps":-1}`); w.Code != 400 {
		t.Errorf("a bad rate with the flag = %d, want 400", w.Code)
	}
	for _, on := range []bool{true, false} {
		body := fmt.Sprintf(`{"affiliate":%t}`, on)
		if w := opsRequest(env, "PATCH", "/api/ops/partners/prt_a", body); w.Code != 200 ||
			!strings.Contains(w.Body.String(), fmt.Sprintf(`"affiliate":%t`, on)) || !strings.Contains(w.Body.String(), `"commission_bps":1250`) {
			t.Errorf("PATCH %s = %d %s, want the flag set and the rate kept", body, w.Code, w.Body)
		}
		var p models.Partner
		if err := env.db.Take(&p, "id = ?", "prt_a").Error; err != nil || p.Affiliate != on {
			t.Errorf("after PATCH %s the partner's flag is %t (%v)", body, p.Affiliate, err)
		}
	}
	after := sandboxOrder(t, env, "prt_a", "after-change.com", 10_000)
	if before.CommissionCents != 1_500 || after.CommissionCents != 1_250 {
		t.Errorf("commission before the change %d, after %d; want 1500 and 1250", before.CommissionCents, after.CommissionCents)
	}
	if v, _ := env.srv.svc.Orders.Ops(context.Background(), before.PublicID); v.CommissionCents != 1_500 {
		t.Errorf("the earlier order's commission became %d", v.CommissionCents)
	}
}

// Finance lists pending payouts and marks one paid with a reference; the
// payout's ledger lines are written once.
func TestOpsMarkPayoutPaid(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	ledgertest.CheckAtEnd(t, env.db)
	start := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
	if err := env.db.Create(&models.Payout{ID: "po_ops1", PartnerID: "prt_a", Environment: models.EnvLive, Currency: "USD",
		PeriodStart: start, PeriodEnd: start.AddDate(0, 0, 7), AmountCents: 4_321, Status: models.PayoutPending, CreatedAt: env.now}).Error; err != nil {
		t.Fatal(err)
	}
	var list struct {
		Payouts []payout.View `json:"payouts"`
	}
	if rec := opsRequest(env, "GET", "/api/ops/payouts?status=pending", ""); rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &list) != nil ||
		len(list.Payouts) != 1 || list.Payouts[0].ID != "po_ops1" || list.Payouts[0].PartnerID != "prt_a" {
		t.Fatalf("pending payouts = %d %s", rec.Code, rec.Body)
	}
	wantError(t, "no reference", opsRequest(env, "POST", "/api/ops/payouts/po_ops1/mark-paid", `{}`), 400, "validation_error")
	wantError(t, "an unknown payout", opsRequest(env, "POST", "/api/ops/payouts/po_none/mark-paid", `{"reference":"wire-9"}`), 404, "not_found")
	wantError(t, "a bad status", opsRequest(env, "GET", "/api/ops/payouts?status=sent", ""), 400, "validation_error")
	wantError(t, "a bad environment", opsRequest(env, "GET", "/api/ops/payouts?environment=bogus", ""), 400, "validation_error")
	wantError(t, "a bad environment of orders", opsRequest(env, "GET", "/api/ops/orders?environment=bogus", ""), 400, "validation_error")
	var paid payout.View
	for range 2 {
		rec := opsRequest(env, "POST", "/api/ops/payouts/po_ops1/mark-paid", `{"reference":"wire-42"}`)
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &paid) != nil || paid.Status != models.PayoutPaid || *paid.Reference != "wire-42" || paid.PaidAt == nil {
			t.Fatalf("mark paid = %d %s", rec.Code, rec.Body)
		}
	}
	wantError(t, "another reference", opsRequest(env, "POST", "/api/ops/payouts/po_ops1/mark-paid", `{"reference":"wire-43"}`), 409, "conflict")
	var lines []models.LedgerEntry
	env.db.Where("payout_id = ?", "po_ops1").Order("account").Find(&lines)
	if len(lines) != 2 || lines[0].Account != ledger.Cash || lines[0].AmountCents != -4_321 || lines[1].Account != ledger.Payable || lines[1].AmountCents != 4_321 {
		t.Errorf("ledger lines = %+v", lines)
	}
	if w := env.request("POST", "/api/ops/payouts/po_ops1/mark-paid", `{"reference":"wire-42"}`); w.Code != 401 {
		t.Errorf("without the ops login = %d, want 401", w.Code)
	}
}

// The ops settlements page offers the week closed last; its Run now form
// shows why it refuses an open week, a time that starts no week and a
// time it cannot read, keeping what was typed and queueing nothing, and
// queues a closed week's run, which the page then lists and shows.
func TestOpsSettlementsPage(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t) // Sunday 22 November: the week closed last began on the 9th
	page := opsRequest(env, "GET", "/ops/settlements", "")
	if body := page.Body.String(); page.Code != 200 || !strings.Contains(body, `name="period_start" value="2026-11-09T00:00:00Z"`) ||
		!strings.Contains(body, "No runs yet") || !strings.Contains(body, `href="/ops/orders"`) {
		t.Fatalf("page = %d:\n%s", page.Code, body)
	}
	for _, tc := range []struct {
		name, start string
		status      int
		want        string
	}{
		{"an open week", "2026-11-16T00:00:00Z", 409, "has not closed yet: it ends at 2026-11-23T00:00:00Z"},
		{"a Tuesday", "2026-11-10T00:00:00Z", 400, "the period around it starts at 2026-11-09T00:00:00Z"},
		{"not a time", "last week", 400, "must be a date such as 2026-11-09 or a time in RFC 3339 such as 2026-11-09T00:00:00Z"},
	} {
		w := opsForm(env, "/ops/settlements/runs", url.Values{"period_start": {tc.start}})
		if body := w.Body.String(); w.Code != tc.status || !strings.Contains(body, tc.want) || !strings.Contains(body, `value="`+tc.start+`"`) ||
			!strings.Contains(body, `id="runs"`) {
			t.Errorf("%s = %d, want %d with %q and the form as typed:\n%s", tc.name, w.Code, tc.status, tc.want, body)
		}
	}
	if runs, err := env.srv.svc.Settlements.Runs(context.Background()); err != nil || len(runs) != 0 {
		t.Fatalf("after refused forms: runs %v, %v", runs, err)
	}

	w := opsForm(env, "/ops/settlements/runs", url.Values{"period_start": {"2026-11-09T00:00:00Z"}})
	runs, err := env.srv.svc.Settlements.Runs(context.Background())
	if err != nil || len(runs) != 1 || runs[0].Trigger != settlement.TriggerOps || runs[0].Status != models.RunQueued {
		t.Fatalf("after the form: runs %+v, %v", runs, err)
	}
	if w.Code != 303 || w.Header().Get("Location") != "/ops/settlements" {
		t.Fatalf("the form = %d %s", w.Code, w.Header().Get("Location"))
	}
	page = afterForm(env, w)
	if body := page.Body.String(); !strings.Contains(body, "The run of 2026-11-09 00:00 UTC: queued") ||
		!strings.Contains(body, `<a href="/ops/settlements/`+runs[0].ID+`">2026-11-09 00:00 UTC</a>`) {
		t.Errorf("the page after the form:\n%s", body)
	}
	page = opsRequest(env, "GET", "/ops/settlements/"+runs[0].ID, "")
	if body := page.Body.String(); page.Code != 200 || !strings.Contains(body, "No orders settled in this period yet") ||
		!strings.Contains(body, `href="/api/ops/settlements/runs/`+runs[0].ID+`/statements.csv"`) {
		t.Errorf("the run's page = %d:\n%s", page.Code, body)
	}
	if w := opsRequest(env, "GET", "/ops/settlements/stl_nosuch", ""); w.Code != 404 || !strings.Contains(w.Body.String(), "no settlement run stl_nosuch") {
		t.Errorf("an unknown run's page = %d:\n%s", w.Code, w.Body)
	}
	if w := env.request("GET", "/ops/settlements", ""); w.Code != 401 {
		t.Errorf("without the ops login = %d, want 401", w.Code)
	}
}

// An ops person runs the week closed last from the page, in a real
// browser, and reads its statement, to the cent, once it has run.
func TestBrowserOpsSettlements(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := opsChromium(t)
	completedOrder(t, env, "prt_a", "browser-settled.com", 10_000) // Sunday 22 November
	env.now = time.Date(2026, 11, 23, 4, 0, 0, 0, time.UTC)        // its week has closed
	steps := chromedp.Steps(
		chromedp.Navigate(srv.URL+"/ops/orders"),
		chromedp.Click(chromedp.CSS(`nav a[href="/ops/settlements"]`)),
		chromedp.WaitVisible(chromedp.CSS("#run-now")),
	)
	if err := chromedp.Do(ctx, steps); err != nil {
		t.Fatalf("from the orders page to the settlements page: %v", err)
	}
	start, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`#run-now input[name="period_start"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if start != "2026-11-16T00:00:00Z" {
		t.Errorf("the form offers %q, want the week closed last, 2026-11-16T00:00:00Z", start)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#run-now button")), chromedp.WaitVisible(chromedp.CSS(".notice"))); err != nil {
		t.Fatalf("run now: %v", err)
	}
	checkPage(t, ctx, "ops-settlements")
	runs, err := env.srv.svc.Settlements.Runs(context.Background())
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs after Run now: %+v, %v", runs, err)
	}
	row := "#" + runs[0].ID
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(row+" .status")))
	if err != nil {
		t.Fatal(err)
	}
	if status != models.RunQueued {
		t.Errorf("the page lists the run %s, want queued", status)
	}
	if err := env.srv.svc.Settlements.Run(context.Background(), runs[0].ID); err != nil { // the worker's part
		t.Fatal(err)
	}
	steps = chromedp.Steps(
		chromedp.Reload(),
		chromedp.Click(chromedp.CSS(row+" a")),
		chromedp.WaitVisible(chromedp.CSS("#statements")),
	)
	if err := chromedp.Do(ctx, steps); err != nil {
		t.Fatalf("open the run: %v", err)
	}
	checkPage(t, ctx, "ops-settlement-run")
	statement, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#statements tbody tr")))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields("prt_a sandbox USD 1 100.00 USD 0.00 USD 15.00 USD 85.00 USD 0.00 USD 0.00 USD")
	if diff := cmp.Diff(want, strings.Fields(statement)); diff != "" {
		t.Errorf("the statement's row (-want +got):\n%s", diff)
	}
	csvLink, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#csv"), "href"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "/api/ops/settlements/runs/" + runs[0].ID + "/statements.csv"; csvLink.Value != want {
		t.Errorf("the CSV link is %q, want %q", csvLink.Value, want)
	}
}

// In a real browser finance marks a pending payout paid on /ops/payouts:
// the page says so, the row shows the reference, and the ledger has the
// payout's lines once; a reference of another form is refused in words.
func TestBrowserOpsPayouts(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := opsChromium(t)
	ledgertest.CheckAtEnd(t, env.db)
	start := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
	if err := env.db.Create(&models.Payout{ID: "po_page1", PartnerID: "prt_a", Environment: models.EnvLive, Currency: "USD",
		PeriodStart: start, PeriodEnd: start.AddDate(0, 0, 7), AmountCents: 123_456, Status: models.PayoutPending, CreatedAt: env.now}).Error; err != nil {
		t.Fatal(err)
	}
	row := "#po_page1"
	pay := chromedp.Steps(
		chromedp.Navigate(srv.URL+"/ops/payouts?status=pending"),
		chromedp.WaitVisible(chromedp.CSS(row+` input[name="reference"]`)),
		chromedp.SendKeys(chromedp.CSS(row+` input[name="reference"]`), "wire-2026-11-23"),
		chromedp.Click(chromedp.CSS(row+` form button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)),
	)
	if err := chromedp.Do(ctx, pay); err != nil {
		t.Fatalf("the payouts page: %v", err)
	}
	checkPage(t, ctx, "ops-payouts")
	notice, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`p.notice`)))
	if err != nil {
		t.Fatal(err)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(row+" .status")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(notice, "paid 1,234.56 USD to prt_a, reference wire-2026-11-23") || status != models.PayoutPaid {
		t.Errorf("after marking it paid the page says %q, status %q", notice, status)
	}
	var lines int64
	env.db.Model(&models.LedgerEntry{}).Where("payout_id = ?", "po_page1").Count(&lines)
	if lines != 2 {
		t.Errorf("the payout has %d ledger lines, want 2", lines)
	}
	w := opsForm(env, "/ops/payouts/po_page1/mark-paid", url.Values{"reference": {"wire-other"}})
	if w.Code != 409 || !strings.Contains(w.Body.String(), "already paid") || !strings.Contains(w.Body.String(), `id="payouts"`) {
		t.Errorf("marking it paid again with another reference = %d:\n%s", w.Code, w.Body)
	}
}
