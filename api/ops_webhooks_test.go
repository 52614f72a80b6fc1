package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/domaind/domaind/models"
)

// Ops find a partner's failing deliveries on the webhooks page in a real
// browser, filter them, and send the event again: a new delivery of the
// same event, now.
func TestBrowserOpsWebhooks(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := opsChromium(t)
	bg := context.Background()
	hooks := env.srv.svc.Webhooks
	for partner, status := range map[string]int{"prt_ok": http.StatusNoContent, "prt_down": http.StatusServiceUnavailable} {
		if err := env.db.Create(&models.Partner{ID: partner, Name: partner + " Names", ContactEmail: partner + "@example.com",
			Status: models.PartnerApproved, CreatedAt: env.now}).Error; err != nil {
			t.Fatal(err)
		}
		site := serveTestSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
		url := strings.Replace(site, "site.example.net", testSiteAddr, 1) + "/hook"
		if _, err := hooks.Register(bg, partner, models.EnvSandbox, url, "whsec-0123456789abcdef"); err != nil {
			t.Fatal(err)
		}
		ev, err := hooks.SendTest(bg, env.deps.Outbox, partner, models.EnvSandbox)
		if err != nil {
			t.Fatal(err)
		}
		var d models.WebhookDelivery
		if err := env.db.Joins("JOIN events ON events.seq = webhook_deliveries.event_seq").Take(&d, "events.id = ?", ev.ID).Error; err != nil {
			t.Fatal(err)
		}
		hooks.Deliver(bg, env.deps.Outbox, d.ID, true) // the last attempt: prt_down's gives up
	}
	text := pageText(t, ctx)
	err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/ops"), chromedp.Click(chromedp.CSS(`header a[href="/ops/webhooks"]`)),
		chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	if err != nil {
		t.Fatalf("to the webhooks page: %v", err)
	}
	checkPage(t, ctx, "ops-webhooks")
	if rows := text("#endpoints tbody"); !strings.Contains(rows, "prt_ok Names") || !strings.Contains(rows, "prt_down Names") {
		t.Errorf("the endpoints = %q, want both partners'", rows)
	}
	if rows := text("#deliveries tbody"); !strings.Contains(rows, "delivered") || !strings.Contains(rows, "failed") || !strings.Contains(rows, "503") {
		t.Errorf("the deliveries = %q, want one delivered and one failed with its 503", rows)
	}
	err = chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`#filters select[name="state"]`), "failed"),
		chromedp.Click(chromedp.CSS("#filters button")), chromedp.WaitNotPresent(chromedp.CSS("#deliveries tbody tr + tr")))
	if err != nil {
		t.Fatalf("filtering: %v", err)
	}
	if rows := text("#deliveries tbody"); strings.Contains(rows, "delivered") || !strings.Contains(rows, "prt_down Names") {
		t.Errorf("the failed deliveries = %q, want prt_down's only", rows)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#deliveries tbody button")), chromedp.WaitVisible(chromedp.CSS(".notice"))); err != nil {
		t.Fatalf("sending again: %v", err)
	}
	var n int64
	env.db.Model(&models.WebhookDelivery{}).Where("state = ?", models.DeliveryPending).Count(&n)
	if n != 1 || !strings.Contains(text(".notice"), "sent again") {
		t.Errorf("after sending again: %d pending deliveries, notice %q; want one", n, text(".notice"))
	}
}
