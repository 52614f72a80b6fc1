package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/domaind/domaind/internal/brokerage"
	"github.com/domaind/domaind/models"
)

// openCase writes a case of a new partner for domain, open, as the
// partner API would, and returns it.
func openCase(t *testing.T, env *testEnv, domain string) brokerage.View {
	t.Helper()
	ctx := context.Background()
	p := models.Partner{ID: "prt_" + domain[:4], Name: "Acme " + domain, ContactEmail: "ops@acme.example", Status: "approved", CommissionBPS: 1500, CreatedAt: env.now}
	c := models.BrokerageCase{ID: "bc_" + strings.ReplaceAll(domain, ".", "_"), PartnerID: p.ID, Environment: models.EnvLive, Domain: domain,
		Tier: models.TierManaged, BuyerEmail: "ada@buyer.example", BudgetCents: 1_500_000, Currency: "USD", Status: models.CaseOpen,
		CreatedAt: env.now, UpdatedAt: env.now}
	for _, row := range []any{&p, &c, &models.BrokerageStep{CaseID: c.ID, At: env.now, Actor: brokerage.ActorPartner, Status: models.CaseOpen}} {
		if err := env.db.Create(row).Error; err != nil {
			t.Fatal(err)
		}
	}
	v, err := env.srv.svc.Brokerage.Ops(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The buyer follows a case on its progress page, without an account: the
// status, the timeline with the offer ops shared (not the internal one),
// and the price once agreed; a link changed by a character shows an error
// page.
func TestBrowserBrokerageProgress(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := newChromium(t)
	v := openCase(t, env, "progress.com")
	for _, m := range []struct {
		action brokerage.Action
		in     brokerage.MoveInput
	}{
		{brokerage.ContactOwner, brokerage.MoveInput{}},
		{brokerage.RecordOffer, brokerage.MoveInput{AmountCents: 1_100_000, Note: "internal: owner wanted 15k"}},
		{brokerage.RecordOffer, brokerage.MoveInput{AmountCents: 1_200_000, Note: "the owner's counter", Share: true}},
	} {
		if _, err := env.srv.svc.Brokerage.Move(context.Background(), v.CaseID, m.action, m.in); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.HasPrefix(v.ProgressURL, srv.URL+brokerage.ProgressPath+"?t=") {
		t.Fatalf("progress_url %q", v.ProgressURL)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(v.ProgressURL), chromedp.WaitVisible(chromedp.CSS("#status"))); err != nil {
		t.Fatalf("the progress page: %v", err)
	}
	checkPage(t, ctx, "brokerage-progress")
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#status")))
	if err != nil {
		t.Fatal(err)
	}
	timeline, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#timeline")))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#timeline li .step")).map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if status != "Negotiating with the owner" {
		t.Errorf("status %q", status)
	}
	if lead, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#lead"))); err != nil || lead != "We are negotiating with the owner of progress.com on your behalf." {
		t.Errorf("the first sentence while negotiating: %q, %v", lead, err)
	}
	want := []string{"Case opened", "Contacting the owner", "Negotiating with the owner", "Negotiating with the owner"}
	if strings.Join(steps, "|") != strings.Join(want, "|") || !strings.Contains(timeline, "12,000.00 USD") ||
		strings.Contains(timeline, "11,000.00") || strings.Contains(timeline, "internal") {
		t.Errorf("timeline %q (%v), want %v with the shared offer only and no note", timeline, steps, want)
	}

	if _, err = env.srv.svc.Brokerage.Move(context.Background(), v.CaseID, brokerage.CloseDeal, brokerage.MoveInput{PriceCents: 1_250_000}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#price"))); err != nil {
		t.Fatal(err)
	}
	price, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#price")))
	if err != nil {
		t.Fatal(err)
	}
	lead, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#lead")))
	if err != nil {
		t.Fatal(err)
	}
	if lead != "The owner of progress.com agreed to sell it to you at the price below." {
		t.Errorf("the first sentence of a closed deal's page: %q", lead)
	}
	if price != "12,500.00 USD" {
		t.Errorf("price %q", price)
	}

	res, err := http.Get(v.ProgressURL[:len(v.ProgressURL)-1] + "A")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("a changed link = %d, want 404", res.StatusCode)
	}
}

// Ops work a case on the ops page: contact the owner, record an offer
// typed in dollars and shown to the partner, refuse a price that is not
// one, and close the deal.
func TestBrowserOpsBrokerage(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := opsChromium(t)
	v := openCase(t, env, "opspage.com")
	row := "#" + v.CaseID
	toOffer := chromedp.Steps(
		chromedp.Navigate(srv.URL+"/ops/brokerage"),
		chromedp.WaitVisible(chromedp.CSS(row)),
		chromedp.Click(chromedp.CSS(row+` form[action$="/contact-owner"] button`)),
		chromedp.WaitVisible(chromedp.CSS(row+` form[action$="/record-offer"]`)),
		chromedp.SendKeys(chromedp.CSS(row+` input[name="amount"]`), "9,000.5"),
		chromedp.Click(chromedp.CSS(row+` form[action$="/record-offer"] input[name="share"]`)),
		chromedp.Click(chromedp.CSS(row+` form[action$="/record-offer"] button`)),
		chromedp.WaitVisible(chromedp.CSS(row+` form[action$="/close-deal"]`)),
		chromedp.SendKeys(chromedp.CSS(row+` input[name="price"]`), "ten"),
		chromedp.Click(chromedp.CSS(row+` form[action$="/close-deal"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.error`)),
	)
	if err := chromedp.Do(ctx, toOffer); err != nil {
		t.Fatalf("the ops brokerage page: %v", err)
	}
	checkPage(t, ctx, "ops-brokerage")
	problem, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`p.error`)))
	if err != nil {
		t.Fatal(err)
	}
	toDeal := chromedp.Steps(
		chromedp.SendKeys(chromedp.CSS(row+` input[name="price"]`), "10000"),
		chromedp.Click(chromedp.CSS(row+` form[action$="/close-deal"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)),
	)
	if err := chromedp.Do(ctx, toDeal); err != nil {
		t.Fatalf("the ops brokerage page: %v", err)
	}
	if !strings.Contains(problem, "price_cents") {
		t.Errorf("a price of ten: %q, want the field named", problem)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(row+" .status")))
	if err != nil {
		t.Fatal(err)
	}
	outcome, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(row+" .outcome")))
	if err != nil {
		t.Fatal(err)
	}
	if status != models.CaseClosedDeal || outcome != "10,000.00 USD, fee 1,500.00 USD, commission 225.00 USD" {
		t.Errorf("the page shows %s, %q", status, outcome)
	}
	var got brokerage.View
	rec := opsRequest(env, "GET", "/api/ops/brokerage/"+v.CaseID, "")
	err = json.Unmarshal(rec.Body.Bytes(), &got)
	if rec.Code != 200 || err != nil || len(got.Timeline) != 4 || got.Timeline[2].AmountCents == nil || *got.Timeline[2].AmountCents != 900_050 ||
		got.Timeline[2].Internal {
		t.Errorf("timeline %+v, %v; want the offer of 900050 cents, shared", got.Timeline, err)
	}
	wantError(t, "an unknown case", opsRequest(env, "GET", "/api/ops/brokerage/bc_none", ""), 404, "not_found")
}

// Every case status has its words on the buyer's page: a label and a
// first sentence naming the domain.
func TestProgressPageNamesEveryStatus(t *testing.T) {
	for _, status := range brokerage.Statuses {
		if lead := progressLeads[status]; statusLabels[status] == "" || strings.Count(lead, "%s") != 1 {
			t.Errorf("status %s: label %q, lead %q", status, statusLabels[status], lead)
		}
	}
}

// An offer form sent twice (a double click, its answer reloaded) is
// recorded once: at once the second send answers as the first did, later
// it is refused.
func TestOpsOfferSentTwiceIsRecordedOnce(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	v := openCase(t, env, "offertwice.com")
	once := func() string {
		t.Helper()
		m := onceInput.FindStringSubmatch(opsRequest(env, "GET", "/ops/brokerage", "").Body.String())
		if m == nil {
			t.Fatal("the brokerage page has no once token")
		}
		return m[1]
	}
	if w := opsForm(env, "/ops/brokerage/"+v.CaseID+"/contact-owner", url.Values{"once": {once()}}); w.Code != 303 {
		t.Fatalf("contact-owner = %d %s", w.Code, w.Body)
	}
	offer := url.Values{"once": {once()}, "amount": {"9000"}}
	for i, want := range []int{303, 303, 409} {
		if i == 2 {
			env.now = env.now.Add(3 * time.Minute)
		}
		if w := opsForm(env, "/ops/brokerage/"+v.CaseID+"/record-offer", offer); w.Code != want || (want == 409 && !strings.Contains(w.Body.String(), "sent before")) {
			t.Errorf("the offer, send %d = %d %s, want %d", i+1, w.Code, w.Body, want)
		}
	}
	var got brokerage.View
	rec := opsRequest(env, "GET", "/api/ops/brokerage/"+v.CaseID, "")
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	offers := 0
	for _, step := range got.Timeline {
		if step.AmountCents != nil {
			offers++
		}
	}
	if offers != 1 {
		t.Errorf("%d offers recorded by one form sent twice, want one: %+v", offers, got.Timeline)
	}
}
