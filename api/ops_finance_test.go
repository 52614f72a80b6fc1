package api

import (
	"context"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/domaind/domaind/models"
)

// Finance, in a real browser, go from the ops index to the finance page:
// it says when the open week closes, offers to run the week closed last,
// and once that has run shows the week's figures and its bar in the
// chart.
func TestBrowserOpsFinance(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := opsChromium(t)
	completedOrder(t, env, "prt_a", "finance-page.com", 10_000) // Sunday 22 November; 15 % commission
	env.now = time.Date(2026, 11, 23, 4, 0, 0, 0, time.UTC)     // its week has closed
	text := pageText(t, ctx)
	week := "#period-2026-11-16T00\\:00\\:00Z"
	err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/ops"),
		chromedp.Click(chromedp.CSS(`header nav a[href="/ops/finance"]`)),
		chromedp.WaitVisible(chromedp.CSS(week)))
	if err != nil {
		t.Fatalf("from the ops index to the finance page: %v", err)
	}
	if open := text("#open-period"); !strings.Contains(open, "2026-11-23 00:00 UTC") || !strings.Contains(open, "2026-11-30 00:00 UTC") {
		t.Errorf("the open period's notice = %q, want the week of the 23rd and when it closes", open)
	}
	if none := text("#no-chart"); !strings.Contains(none, "No sales") {
		t.Errorf("before any period is settled the chart's place says %q", none)
	}
	if row := text(week); !strings.Contains(row, "Not run yet") {
		t.Errorf("the week closed last = %q, want it not run yet", row)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(week+" button")), chromedp.WaitVisible(chromedp.CSS(".notice"))); err != nil {
		t.Fatalf("run now: %v", err)
	}
	runs, err := env.srv.svc.Settlements.Runs(context.Background())
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs after Run now: %+v, %v", runs, err)
	}
	if err := env.srv.svc.Settlements.Run(context.Background(), runs[0].ID); err != nil { // the worker's part
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/ops/finance"), chromedp.WaitVisible(chromedp.CSS(week+" a"))); err != nil {
		t.Fatalf("back to the finance page: %v", err)
	}
	checkPage(t, ctx, "ops-finance")
	want := strings.Fields("done USD 1 100.00 USD 0.00 USD 15.00 USD 85.00 USD 0.00 USD 0.00 USD")
	if got := strings.Fields(text(week)); strings.Join(got[len(got)-len(want):], " ") != strings.Join(want, " ") {
		t.Errorf("the settled week = %q, want it ending %q", got, want)
	}
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#chart svg g")).map(g => g.querySelector("title").textContent + " " + g.querySelector(".gross").getAttribute("height"))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(bars) != 12 || bars[11] != "2026-11-16: sales 100.00 USD, commission 15.00 USD 180" || !strings.HasSuffix(bars[0], " 0") {
		t.Errorf("the chart's bars = %q, want 12, the week of the 16th last and full height, the others empty", bars)
	}
}

// The payouts CSV holds every payout of the filter, past a page, with the
// partner's name; a text a spreadsheet would run as a formula is kept as
// text; a wrong filter is a page in words.
func TestOpsPayoutsCSV(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	if err := env.db.Create(&models.Partner{ID: "prt_formula", Name: "=HYPERLINK(\"http://evil.test\")", ContactEmail: "x@example.com",
		Status: models.PartnerApproved, CreatedAt: env.now}).Error; err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)
	var payouts []models.Payout
	for i := range 130 {
		p := models.Payout{ID: fmt.Sprintf("po_csv%03d", i), PartnerID: "prt_formula", Environment: models.EnvLive, Currency: "USD",
			PeriodStart: start.AddDate(0, 0, 7*i), PeriodEnd: start.AddDate(0, 0, 7*i+7), AmountCents: int64(1000 + i), Status: models.PayoutPending, CreatedAt: env.now}
		if i%2 == 0 {
			paid := env.now
			p.Status, p.Reference, p.PaidAt = models.PayoutPaid, "+wire-"+fmt.Sprint(i), &paid
		}
		payouts = append(payouts, p)
	}
	if err := env.db.Create(&payouts).Error; err != nil {
		t.Fatal(err)
	}
	read := func(query string) [][]string {
		t.Helper()
		w := opsRequest(env, "GET", "/ops/payouts.csv"+query, "")
		if w.Code != 200 || w.Header().Get("Content-Type") != "text/csv; charset=utf-8" {
			t.Fatalf("payouts.csv%s = %d %s", query, w.Code, w.Body)
		}
		if cc := w.Header().Get("Cache-Control"); cc != "no-store" { // partners' bank references
			t.Errorf("payouts.csv%s: Cache-Control %q, want no-store", query, cc)
		}
		rows, err := csv.NewReader(w.Body).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	all := read("")
	if len(all) != 131 || all[0][0] != "payout_id" {
		t.Fatalf("every payout: %d rows, header %v; want 130 and the header", len(all)-1, all[0])
	}
	paid := read("?status=paid")
	if len(paid) != 66 {
		t.Errorf("paid payouts: %d rows, want 65", len(paid)-1)
	}
	for _, row := range paid[1:] {
		if row[2] != `'=HYPERLINK("http://evil.test")` || !strings.HasPrefix(row[10], "'+wire-") || row[9] != "paid" {
			t.Errorf("a paid payout's row = %q: want the name and reference kept as text", row)
		}
	}
	if row := all[1]; row[0] != "po_csv129" || row[7] != "1129" || row[8] != "11.29 USD" || row[4] != "2027-06-28T00:00:00Z" {
		t.Errorf("the newest payout's row = %q", row)
	}
	w := opsRequest(env, "GET", "/ops/payouts.csv?status=lost", "")
	if w.Code != 400 || !strings.Contains(w.Body.String(), "status") {
		t.Errorf("a wrong status = %d %s, want 400 naming status", w.Code, w.Body)
	}
}
