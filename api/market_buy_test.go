package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/domaind/domaind/internal/ledger/ledgertest"
	"github.com/domaind/domaind/models"
)

// A person buys a name the marketplace lists, in a real browser: its page
// opens the hosted checkout of the house seller, the test card pays, and
// the browser comes back to the name's page, which thanks the buyer with
// the order; the order is the house's, the name sold once.
func TestBrowserBuyFromTheMarketplace(t *testing.T) {
	env, srv := servedEnv(t)
	ledgertest.CheckAtEnd(t, env.db)
	price := int64(125_000)
	l := models.Listing{ID: models.NewID(), Domain: "harborbuy.com", TLD: "com", BINCents: &price, Currency: "USD",
		Approved: true, MarketplaceVisible: true, CreatedAt: env.now}
	if err := env.db.Create(&l).Error; err != nil {
		t.Fatal(err)
	}
	ctx := newChromium(t)
	text := pageText(t, ctx)
	err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/market/harborbuy.com"),
		chromedp.Click(chromedp.CSS("#market-buy button")),
		chromedp.WaitVisible(chromedp.CSS("#card_number")))
	if err != nil {
		t.Fatalf("to the checkout: %v", err)
	}
	if page := text("body"); !strings.Contains(page, "1,250.00 USD") || !strings.Contains(page, "domaind marketplace") {
		t.Errorf("the checkout page = %q, want the price and the house as seller", page)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#email"), "ada@example.com"),
		payWithCard("4242 4242 4242 4242"),
		chromedp.WaitVisible(chromedp.CSS("#market-bought")))
	if err != nil {
		t.Fatalf("paying: %v", err)
	}
	checkPage(t, ctx, "market-bought")
	var orders []models.Order
	if err := env.db.Find(&orders).Error; err != nil || len(orders) != 1 {
		t.Fatalf("orders after paying = %+v, %v", orders, err)
	}
	o := orders[0]
	if o.PartnerID != models.HousePartnerID || o.Domain != "harborbuy.com" || o.SalePriceCents != 125_000 || o.Environment != models.EnvLive {
		t.Errorf("the order = %+v, want the house's live sale of harborbuy.com at 125000 cents", o)
	}
	if got := text("#market-bought"); !strings.Contains(got, o.PublicID) || !strings.Contains(got, "paid") {
		t.Errorf("the thanks = %q, want the order %s, paid", got, o.PublicID)
	}
	if got := text("#market-status"); got != "This name has been sold." {
		t.Errorf("the name's status after the sale = %q", got)
	}
	// Delivered and settled, the house's sale owes it nothing (commission
	// 0): no payout opens, and the ledger balances (CheckAtEnd).
	for _, action := range []string{"start-transfer", "confirm-delivery"} {
		if w := opsRequest(env, "POST", "/api/ops/orders/"+o.PublicID+"/"+action, `{"recipient":"buyer-registrar"}`); w.Code != 200 {
			t.Fatalf("%s = %d %s", action, w.Code, w.Body)
		}
	}
	env.now = env.now.AddDate(0, 0, 7)
	run, err := env.srv.svc.Settlements.RequestClosed(context.Background(), env.now)
	if err == nil {
		err = env.srv.svc.Settlements.Run(context.Background(), run.ID)
	}
	if err != nil {
		t.Fatal(err)
	}
	var payouts int64
	env.db.Model(&models.Payout{}).Count(&payouts)
	var settled models.Order
	env.db.Take(&settled, "public_id = ?", o.PublicID)
	if settled.Status != models.OrderSettled || payouts != 0 {
		t.Errorf("after the run: order %s, %d payouts; want it settled and none", settled.Status, payouts)
	}
}

// A Buy form without its token, as another site would send it, opens no
// checkout; nor does one for a name that takes offers only.
func TestMarketBuyRefusals(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	price := int64(5_000)
	for _, l := range []models.Listing{
		{ID: models.NewID(), Domain: "priced.com", TLD: "com", BINCents: &price},
		{ID: models.NewID(), Domain: "offersonly.com", TLD: "com"},
	} {
		l.Currency, l.Approved, l.MarketplaceVisible, l.CreatedAt = "USD", true, true, env.now
		if err := env.db.Create(&l).Error; err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(t, env)
	res, body := b.form("/market/priced.com/buy", nil)
	if res.StatusCode != 403 || !strings.Contains(body, "form expired") {
		t.Errorf("a Buy without its token = %d %s", res.StatusCode, body)
	}
	token := b.formToken("/market/priced.com")
	res, body = b.form("/market/offersonly.com/buy", url.Values{"csrf_token": {token}})
	if res.StatusCode != 409 || !strings.Contains(body, `id="market-error"`) {
		t.Errorf("buying a name without a price = %d %s, want 409 on its page", res.StatusCode, body)
	}
	var n int64
	env.db.Model(&models.CheckoutSession{}).Count(&n)
	if n != 0 {
		t.Errorf("%d checkout sessions opened by refused forms", n)
	}
}

// One address opens at most marketBuyHourly's checkouts an hour from the
// marketplace, minute after minute: each may go on to hold its name for
// the processor's page, so an address could otherwise keep hundreds of
// names from everyone else. The next hour opens again.
func TestMarketBuyIsCappedPerHour(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	price := int64(5_000)
	l := models.Listing{ID: models.NewID(), Domain: "popular.com", TLD: "com", BINCents: &price, Currency: "USD",
		Approved: true, MarketplaceVisible: true, CreatedAt: env.now}
	if err := env.db.Create(&l).Error; err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, env)
	token := b.formToken("/market/popular.com")
	buy := func() int {
		res, _ := b.form("/market/popular.com/buy", url.Values{"csrf_token": {token}})
		return res.StatusCode
	}
	opened := 0
	for range 3 { // within the minute's limit each time, past the hour's
		for range marketBuyLimit.Limit - 2 {
			if buy() == http.StatusSeeOther {
				opened++
			}
		}
		env.now = env.now.Add(2 * time.Minute)
	}
	if opened != marketBuyHourly.Limit {
		t.Errorf("%d checkouts opened over six minutes, want the hour's %d", opened, marketBuyHourly.Limit)
	}
	if got := buy(); got != http.StatusTooManyRequests {
		t.Errorf("one more in the hour = %d, want 429", got)
	}
	env.now = env.now.Add(time.Hour)
	if got := buy(); got != http.StatusSeeOther {
		t.Errorf("the next hour = %d, want 303 to a checkout", got)
	}
	var n int64
	env.db.Model(&models.CheckoutSession{}).Count(&n)
	if n != int64(marketBuyHourly.Limit)+1 {
		t.Errorf("%d checkout sessions, want %d", n, marketBuyHourly.Limit+1)
	}
}
