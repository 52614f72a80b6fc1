package partner_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/ledger/ledgertest"
	"github.com/domaind/domaind/internal/order"
	partners "github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/internal/payout"
	"github.com/domaind/domaind/internal/period"
	"github.com/domaind/domaind/internal/referral"
	"github.com/domaind/domaind/internal/settlement"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/partnerclient"
)

// browserUA is a person's browser, as the click counter sees one.
const browserUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

// affiliate makes a partner with a credential of env and scopes, in the
// affiliate program at rate bps.
func (e *env) affiliate(env string, bps int, scopes ...string) (partners.Issued, string) {
	e.t.Helper()
	cred := e.credential(env, scopes...)
	id := e.partnerOf(cred)
	yes := true
	if _, err := e.partners.Update(context.Background(), id, partners.Terms{CommissionBPS: &bps, Affiliate: &yes}); err != nil {
		e.t.Fatal(err)
	}
	return cred, id
}

// makeLink makes a link of kind and target with c.
func makeLink(t *testing.T, c *partnerclient.Client, kind, target string) referral.Link {
	t.Helper()
	var l referral.Link
	body := fmt.Sprintf(`{"kind":%q,"target":%q}`, kind, target)
	if kind == "generic" {
		body = `{"kind":"generic"}`
	}
	if res := post(t, c, "/api/partner/v1/links", []byte(body), "link-"+kind+target, &l); res.StatusCode != 201 {
		t.Fatalf("POST /links %s = %d", body, res.StatusCode)
	}
	return l
}

// click follows link as a browser of userAgent and returns the answer.
func (b *buyer) click(link, userAgent string) page {
	b.t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		b.t.Fatal(err)
	}
	r, _ := http.NewRequest("GET", b.e.url+u.RequestURI(), nil)
	r.Header.Set("User-Agent", userAgent)
	return b.do(r)
}

// A visitor clicks an affiliate's link, and pays three checkouts of
// another partner: one kept, one refunded in part, one in full. The link
// counts one click, the sales are attributed, their commission accrues
// pending and is reversed in proportion, the settlement makes what is
// left payable and opens the affiliate's payout; every report agrees, to
// the cent.
func TestReferralFromClickToPayout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ledgertest.CheckAtEnd(t, e.db)
	ctx := context.Background()
	for domain, cents := range map[string]int64{"referred-sale.com": 120_000, "partly-back.com": 50_000, "all-back.com": 30_000} {
		e.addSandbox(domain, cents)
	}
	sellerCred := e.credential(models.EnvSandbox, "embed", "buy")
	seller := e.client(sellerCred, 0)
	affCred, affID := e.affiliate(models.EnvSandbox, 1_000, "refer", "report")
	aff := e.client(affCred, 0)

	link := makeLink(t, aff, "product", "Referred-Sale.com")
	if link.Kind != "product" || link.Target == nil || *link.Target != "referred-sale.com" || link.URL != "http://api.test/r/"+link.Code || link.Clicks != 0 {
		t.Fatalf("link = %+v", link)
	}
	b := e.buyer(t)
	first := b.click(link.URL, browserUA)
	if first.status != 302 || first.location != "http://api.test/market/referred-sale.com" || !strings.Contains(first.header.Get("Set-Cookie"), "domaind_ref=rf1.") ||
		!strings.Contains(first.header.Get("Set-Cookie"), "Max-Age=2592000") || !strings.Contains(first.header.Get("Set-Cookie"), "HttpOnly") {
		t.Fatalf("click = %d to %q, cookie %q", first.status, first.location, first.header.Get("Set-Cookie"))
	}
	if again := b.click(link.URL, browserUA); again.status != 302 {
		t.Fatalf("second click = %d", again.status)
	}
	// The user agent is the client's to choose: a hundred of them from one
	// address are one visitor.
	for i := range 100 {
		if p := b.click(link.URL, fmt.Sprintf("%s Build/%d", browserUA, i)); p.status != 302 {
			t.Fatalf("a click as another browser = %d", p.status)
		}
	}
	bot := e.buyer(t).click(link.URL, "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)")
	if bot.status != 302 || bot.location != first.location || bot.header.Get("Set-Cookie") != "" {
		t.Errorf("a crawler's click = %d to %q with cookie %q, want on without a cookie", bot.status, bot.location, bot.header.Get("Set-Cookie"))
	}
	if n := e.count(&models.ReferralClick{}, "link_id = ?", link.ID); n != 1 {
		t.Errorf("%d clicks counted, want 1 (the same visitor in an hour, whatever its user agent, and a crawler)", n)
	}
	if p := e.buyer(t).click("http://api.test/r/nosuchcode2", browserUA); p.status != 404 || !strings.Contains(p.body, `"not_found"`) {
		t.Errorf("an unknown code = %d %s", p.status, p.body)
	}

	orders := map[string]string{}
	for _, domain := range []string{"referred-sale.com", "partly-back.com", "all-back.com"} {
		p := b.pay(openCheckout(t, seller, domain).CheckoutURL, "4242 4242 4242 4242")
		back, _ := url.Parse(p.location)
		if orders[domain] = back.Query().Get("order_id"); p.status != 303 || orders[domain] == "" {
			t.Fatalf("paying %s = %d %s", domain, p.status, p.body)
		}
	}
	var o models.Order
	e.db.Take(&o, "public_id = ?", orders["referred-sale.com"])
	if o.ReferralLinkID == nil || *o.ReferralLinkID != link.ID || o.ReferralPartnerID == nil || *o.ReferralPartnerID != affID ||
		o.ReferralBPS != 1_000 || o.ReferralCents != 12_000 || o.CommissionCents != 18_000 {
		t.Errorf("the referred order = %+v", o)
	}
	if n := e.count(&models.CheckoutSession{}, "referral_link_id = ?", link.ID); n != 3 {
		t.Errorf("%d checkouts started by the link, want 3", n)
	}
	if res := post(t, seller, "/api/partner/v1/refunds", []byte(`{"order_id":"`+orders["partly-back.com"]+`","reason":"part","amount_cents":20000}`), "r1", nil); res.StatusCode != 201 {
		t.Fatalf("partial refund = %d", res.StatusCode)
	}
	if res := post(t, seller, "/api/partner/v1/refunds", []byte(`{"order_id":"`+orders["all-back.com"]+`","reason":"all"}`), "r2", nil); res.StatusCode != 201 {
		t.Fatalf("full refund = %d", res.StatusCode)
	}

	var sales struct {
		Sales []referral.Sale `json:"sales"`
	}
	if err := aff.GetJSON(ctx, "/api/partner/v1/me/sales", nil, &sales); err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	earned := map[string]int64{}
	for _, s := range sales.Sales {
		state[s.Domain], earned[s.Domain] = s.CommissionState, s.CommissionCents
		if s.BuyerEmail != "a***@e***.com" || s.LinkID != link.ID {
			t.Errorf("sale %+v: want the buyer masked and the link", s)
		}
	}
	if len(sales.Sales) != 3 || earned["referred-sale.com"] != 12_000 || earned["partly-back.com"] != 3_000 || earned["all-back.com"] != 0 ||
		state["referred-sale.com"] != "pending" || state["all-back.com"] != "reversed" {
		t.Errorf("sales = %+v", sales.Sales)
	}

	// Deliver two, and settle their week.
	orderSvc := order.New(e.db, e.outbox, testSecretKey, order.Options{QuoteTTL: time.Minute, ReviewThresholdCents: 10_000_000}, e.clock)
	for _, domain := range []string{"referred-sale.com", "partly-back.com"} {
		for _, a := range []order.Action{order.StartTransfer, order.ConfirmDelivery} {
			if _, err := orderSvc.Move(ctx, orders[domain], a, order.MoveInput{Recipient: "buyer-registrar"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	week := period.Week.Of(e.now)
	settlements := settlement.New(e.db, e.outbox, orderSvc, period.Week, testSecretKey, func() time.Time { return week.End.Add(time.Hour) })
	run, err := settlements.Request(ctx, week.Start, settlement.TriggerOps)
	if err == nil {
		err = settlements.Run(ctx, run.ID)
	}
	if err != nil {
		t.Fatal(err)
	}
	statements, err := settlements.PeriodStatements(ctx, week.Start)
	if err != nil {
		t.Fatal(err)
	}
	byPartner := map[string]settlement.Statement{}
	for _, st := range statements {
		byPartner[st.PartnerID] = st
	}
	// The seller: 120,000 + 50,000 − 20,000 gross; commission 18,000 +
	// 7,500 − 3,000; all of it payable (hosted). The affiliate: 12,000 +
	// 5,000 − 2,000 of referral commission, payable.
	if st := byPartner[e.partnerOf(sellerCred)]; len(statements) != 2 || st.Orders != 2 || st.GrossCents != 170_000 || st.RefundsCents != -20_000 ||
		st.CommissionCents != 22_500 || st.ReferralCents != 0 || st.PayoutCents != 22_500 {
		t.Errorf("the seller's statement = %+v (of %d)", st, len(statements))
	}
	if st := byPartner[affID]; st.Orders != 0 || st.GrossCents != 0 || st.CommissionCents != 0 || st.ReferralCents != 15_000 || st.PayoutCents != 15_000 {
		t.Errorf("the affiliate's statement = %+v", st)
	}

	var links struct {
		Links []referral.Link `json:"links"`
	}
	if err := aff.GetJSON(ctx, "/api/partner/v1/links", nil, &links); err != nil {
		t.Fatal(err)
	}
	if len(links.Links) != 1 || links.Links[0].Clicks != 1 || links.Links[0].Sales != 2 || links.Links[0].CommissionCents != 15_000 {
		t.Errorf("links = %+v", links.Links)
	}
	var ledger struct {
		Commissions []referral.CommissionLine   `json:"commissions"`
		Totals      []referral.CommissionTotals `json:"totals"`
	}
	if err := aff.GetJSON(ctx, "/api/partner/v1/me/commissions", url.Values{"to": {week.End.Format(time.DateOnly)}}, &ledger); err != nil {
		t.Fatal(err)
	}
	var types []string
	var balance int64
	for _, l := range ledger.Commissions {
		types = append(types, fmt.Sprintf("%s %d", l.Type, l.AmountCents))
		balance = l.BalanceCents
	}
	slices.Sort(types) // the settlement's two lines come in either order
	want := "accrued 12000, accrued 3000, pending 12000, pending 3000, pending 5000, reversed -2000, reversed -3000"
	if got := strings.Join(types, ", "); got != want || balance != 15_000 {
		t.Errorf("commission lines = %s, balance %d; want %s, balance 15000", got, balance, want)
	}
	var paged []string // the same lines two at a time, by next_cursor
	for cursor, pages := "", 0; pages == 0 || cursor != ""; pages++ {
		var page struct {
			Commissions []referral.CommissionLine `json:"commissions"`
			NextCursor  *string                   `json:"next_cursor"`
		}
		q := url.Values{"to": {week.End.Format(time.DateOnly)}, "limit": {"2"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		if err := aff.GetJSON(ctx, "/api/partner/v1/me/commissions", q, &page); err != nil || pages > 10 {
			t.Fatalf("commissions page %d: %v", pages+1, err)
		}
		for _, l := range page.Commissions {
			paged = append(paged, fmt.Sprintf("%s %d", l.Type, l.AmountCents))
		}
		cursor = ""
		if page.NextCursor != nil {
			cursor = *page.NextCursor
		}
	}
	slices.Sort(paged)
	if strings.Join(paged, ", ") != want {
		t.Errorf("commission lines paged by two = %v, want %s", paged, want)
	}
	if len(ledger.Totals) != 1 || ledger.Totals[0] != (referral.CommissionTotals{Currency: "USD", AccruedCents: 15_000, PendingCents: 20_000,
		ReversedCents: 5_000, BalanceCents: 15_000}) {
		t.Errorf("commission totals = %+v", ledger.Totals)
	}
	var payouts struct {
		Payouts []payout.View  `json:"payouts"`
		Totals  []payout.Total `json:"totals"`
	}
	if err := aff.GetJSON(ctx, "/api/partner/v1/me/payouts", nil, &payouts); err != nil {
		t.Fatal(err)
	}
	if len(payouts.Payouts) != 1 || payouts.Payouts[0].AmountCents != 15_000 || len(payouts.Totals) != 1 || payouts.Totals[0].PendingCents != 15_000 {
		t.Errorf("me/payouts = %+v", payouts)
	}
	var funnel referral.Analytics
	if err := aff.GetJSON(ctx, "/api/partner/v1/analytics", nil, &funnel); err != nil {
		t.Fatal(err)
	}
	if f := funnel.Totals; f != (referral.Funnel{Clicks: 1, Checkouts: 3, Sales: 2, GMVCents: 150_000, CommissionCents: 15_000}) ||
		funnel.Conversion != (referral.Rates{ClickToCheckout: 3, CheckoutToSale: 0.6666, ClickToSale: 2}) || len(funnel.Days) != referral.DefaultDays {
		t.Errorf("analytics = %+v (%d days)", funnel, len(funnel.Days))
	}
	var clicks referral.ClickReport
	if err := aff.GetJSON(ctx, "/api/partner/v1/me/clicks", url.Values{"from": {e.now.Format(time.DateOnly)}, "to": {e.now.Format(time.DateOnly)}}, &clicks); err != nil {
		t.Fatal(err)
	}
	if clicks.Clicks != 1 || len(clicks.Days) != 1 || clicks.Days[0].Clicks != 1 {
		t.Errorf("clicks = %+v", clicks)
	}
}

// A click an hour later counts again and replaces the cookie: the last
// link clicked gets the sale. A partner's own link on its own checkout
// gets the sale but no commission. A sale in another environment than the
// link's is not attributed, nor one after the cookie's 30 days.
func TestReferralAttributionRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ledgertest.CheckAtEnd(t, e.db)
	for _, domain := range []string{"last-click.com", "own-sale.com", "other-env.com", "too-late.com"} {
		e.addSandbox(domain, 10_000)
	}
	seller, sellerID := e.affiliate(models.EnvSandbox, 1_500, "embed", "refer")
	other, _ := e.affiliate(models.EnvSandbox, 500, "refer")
	live, _ := e.affiliate(models.EnvLive, 500, "refer")
	b := e.buyer(t)
	first := makeLink(t, e.client(other, 0), "generic", "")
	own := makeLink(t, e.client(seller, 0), "domain", "own-sale.com")
	liveLink := makeLink(t, e.client(live, 0), "generic", "")
	if p := b.click(first.URL, browserUA); p.status != 302 || p.location != "http://api.test/" {
		t.Fatalf("generic click = %d to %q", p.status, p.location)
	}
	if p := b.click(own.URL, browserUA); p.status != 302 || p.location != "http://api.test/market?q=own-sale.com" {
		t.Fatalf("domain click = %d to %q", p.status, p.location)
	}
	e.now = e.now.Add(time.Hour)
	b.click(first.URL, browserUA) // an hour later: counted again, and the last click
	if n := e.count(&models.ReferralClick{}, "link_id = ?", first.ID); n != 2 {
		t.Errorf("%d clicks of the first link, want 2 (an hour apart)", n)
	}
	pay := func(domain string) models.Order {
		t.Helper()
		p := b.pay(openCheckout(t, e.client(seller, 0), domain).CheckoutURL, "4242 4242 4242 4242")
		back, _ := url.Parse(p.location)
		var o models.Order
		if err := e.db.Take(&o, "public_id = ?", back.Query().Get("order_id")).Error; err != nil {
			t.Fatalf("paying %s = %d: %v", domain, p.status, err)
		}
		return o
	}
	if o := pay("last-click.com"); o.ReferralLinkID == nil || *o.ReferralLinkID != first.ID || o.ReferralBPS != 500 || o.ReferralCents != 500 {
		t.Errorf("after clicking two links, the sale is referred by %v at %d bps, want the last link at 500", o.ReferralLinkID, o.ReferralBPS)
	}
	b.click(own.URL, browserUA)
	if o := pay("own-sale.com"); o.ReferralLinkID == nil || *o.ReferralLinkID != own.ID || *o.ReferralPartnerID != sellerID || o.ReferralCents != 0 {
		t.Errorf("the seller's own referral = %v, %d cents; want its link with no commission", o.ReferralLinkID, o.ReferralCents)
	}
	b.click(liveLink.URL, browserUA) // a live link's cookie, on a sandbox checkout
	if o := pay("other-env.com"); o.ReferralLinkID != nil {
		t.Errorf("a sandbox sale is referred by a live link, %v", *o.ReferralLinkID)
	}
	b.click(first.URL, browserUA)
	e.now = e.now.Add(referral.CookieTTL + time.Second)
	b.click(own.URL, "") // no user agent: not counted, no new cookie
	if o := pay("too-late.com"); o.ReferralLinkID != nil {
		t.Errorf("a sale 30 days after the click is referred by %v", *o.ReferralLinkID)
	}
	if n := e.count(&models.ReferralClick{}, "link_id = ?", own.ID); n != 2 {
		t.Errorf("%d clicks of the seller's link, want 2 (the click without a user agent not counted)", n)
	}
	if n := e.count(&models.LedgerEntry{}, "kind = ? AND account = ?", "referral", "referral_commission"); n != 1 {
		t.Errorf("%d referral accruals, want 1 (no commission on a partner's own sale)", n)
	}
}

// Every referral endpoint refuses a partner that is not an affiliate, and
// a credential without its scope; bad input gets a validation error
// naming the field; none of them writes anything.
func TestReferralRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.addSandbox("listed-name.com", 10_000)
	plain := e.client(e.credential(models.EnvSandbox, "refer", "report"), 0)
	reads := []string{"/api/partner/v1/links", "/api/partner/v1/me/clicks", "/api/partner/v1/me/sales", "/api/partner/v1/me/commissions",
		"/api/partner/v1/me/payouts", "/api/partner/v1/analytics"}
	for _, path := range reads {
		ae := wantAPIError(t, "GET "+path+" of a partner that is not an affiliate", plain.GetJSON(ctx, path, nil, nil), 403, "forbidden")
		if ae != nil && !strings.Contains(ae.Message, "affiliate") {
			t.Errorf("GET %s: %q does not say why", path, ae.Message)
		}
	}
	res, _, err := plain.Do(ctx, "POST", "/api/partner/v1/links", nil, []byte(`{"kind":"generic"}`))
	if err != nil || res.StatusCode != 403 {
		t.Errorf("POST /links of a partner that is not an affiliate = %v %v", res, err)
	}
	noRefer, _ := e.affiliate(models.EnvSandbox, 1_500, "report")
	noReport, _ := e.affiliate(models.EnvSandbox, 1_500, "refer")
	wantAPIError(t, "GET /links without refer", e.client(noRefer, 0).GetJSON(ctx, "/api/partner/v1/links", nil, nil), 403, "forbidden")
	for _, path := range reads[1:] {
		wantAPIError(t, "GET "+path+" without report", e.client(noReport, 0).GetJSON(ctx, path, nil, nil), 403, "forbidden")
	}
	aff, _ := e.affiliate(models.EnvSandbox, 1_500, "refer", "report")
	c := e.client(aff, 0)
	for body, field := range map[string]string{
		`{}`:                "kind",
		`{"kind":"banner"}`: "kind",
		`{"kind":"generic","target":"example.com"}`:  "target",
		`{"kind":"domain"}`:                          "target",
		`{"kind":"domain","target":"not a domain"}`:  "target",
		`{"kind":"product","target":"unlisted.com"}`: "target",
	} {
		res, b, err := c.Do(ctx, "POST", "/api/partner/v1/links", nil, []byte(body))
		if err != nil || res.StatusCode != 400 || !strings.Contains(string(b), `"field":"`+field+`"`) {
			t.Errorf("POST /links %s = %v %s, want 400 naming %s", body, err, b, field)
		}
	}
	for q, field := range map[string]url.Values{
		"from": {"from": {"2026-11-20"}, "to": {"2026-11-10"}},
		"to":   {"to": {"yesterday"}},
	} {
		res, b, err := c.Do(ctx, "GET", "/api/partner/v1/analytics", field, nil)
		if err != nil || res.StatusCode != 400 || !strings.Contains(string(b), `"field":"`+q+`"`) {
			t.Errorf("analytics %v = %v %s, want 400 naming %s", field, err, b, q)
		}
	}
	if res, b, err := c.Do(ctx, "GET", "/api/partner/v1/me/clicks", url.Values{"from": {"2024-01-01"}, "to": {"2026-01-01"}}, nil); err != nil ||
		res.StatusCode != 400 || !strings.Contains(string(b), "366") {
		t.Errorf("two years of clicks = %v %s, want 400", err, b)
	}
	if res, b, err := c.Do(ctx, "GET", "/api/partner/v1/me/sales", url.Values{"cursor": {"forged"}}, nil); err != nil || res.StatusCode != 400 {
		t.Errorf("a forged cursor = %v %s", err, b)
	}
	if n := e.count(&models.ReferralLink{}, "1 = 1"); n != 0 {
		t.Errorf("%d links made by refused requests", n)
	}
	makeLink(t, c, "product", "listed-name.com")
}
