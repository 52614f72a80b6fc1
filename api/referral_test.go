package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/internal/referral"
	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/models"
)

// A person follows an affiliate's link in a real browser (one whose user
// agent is a person's: headless Chromium names itself a crawler), lands on
// the marketplace, and later pays a checkout in the same browser: the
// click is counted, the cookie set by the redirect survives to the
// checkout, and the order is the link's.
func TestBrowserReferredCheckout(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := newChromium(t, chromedp.UserAgent("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"))
	bg := context.Background()
	listSandbox(t, env, "sunsetyoga.io", 25_000)
	c := checkoutPartner(t, env, srv.URL, models.EnvSandbox)
	aff, err := env.srv.svc.Partners.Create(bg, "Yoga Blog", "hello@yogablog.test")
	if err != nil {
		t.Fatal(err)
	}
	yes, bps := true, 2_000
	if _, err := env.srv.svc.Partners.Update(bg, aff.ID, partner.Terms{Affiliate: &yes, CommissionBPS: &bps}); err != nil {
		t.Fatal(err)
	}
	link, err := env.srv.svc.Referrals.CreateLink(bg, aff.ID, models.EnvSandbox, referral.NewLink{Kind: models.LinkDomain, Target: "sunsetyoga.io"})
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(link.URL), chromedp.WaitVisible(chromedp.CSS("#q"))); err != nil {
		t.Fatalf("following the link: %v", err)
	}
	checkPage(t, ctx, "market")
	q, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#q")))
	if err != nil || q != "sunsetyoga.io" {
		t.Errorf("the link landed on a search for %q (%v), want sunsetyoga.io", q, err)
	}
	var s struct {
		CheckoutURL string `json:"checkout_url"`
	}
	err = c.PostJSON(bg, "/api/partner/v1/checkout-session", map[string]string{"domain": "sunsetyoga.io",
		"return_url": srv.URL + "/", "cancel_url": srv.URL + "/", "buyer_email": "ada@example.com"}, &s)
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Navigate(s.CheckoutURL), chromedp.WaitVisible(chromedp.CSS("#card_number")),
		payWithCard("4242 4242 4242 4242"),
		chromedp.WaitVisible(chromedp.CSS("h1")))
	if err != nil {
		t.Fatalf("paying: %v", err)
	}
	var o models.Order
	testtool.WaitFor(t, "the order of the paid checkout", func() bool { // the browser may show h1 before the payment's answer
		return env.db.Take(&o, "domain = ?", "sunsetyoga.io").Error == nil
	})
	if o.ReferralLinkID == nil || *o.ReferralLinkID != link.ID || o.ReferralCents != 5_000 {
		t.Errorf("the order's referral = %v, %d cents; want %s, 5000", o.ReferralLinkID, o.ReferralCents, link.ID)
	}
	var clicks int64
	env.db.Model(&models.ReferralClick{}).Where("link_id = ?", link.ID).Count(&clicks)
	if clicks != 1 {
		t.Errorf("%d clicks counted, want 1", clicks)
	}
	if !strings.HasPrefix(link.URL, srv.URL+"/r/") {
		t.Errorf("link url %q is not on the base URL", link.URL)
	}
}

// Over https the attribution cookie is read under its __Host- name, and,
// for the clicks made before the upgrade, under its plain one; over http
// only the plain name is the cookie.
func TestReferralCookieNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base    string
		cookies []*http.Cookie
		want    string
	}{
		{"https://domaind.example", []*http.Cookie{{Name: "__Host-" + referral.CookieName, Value: "new"}, {Name: referral.CookieName, Value: "old"}}, "new"},
		{"https://domaind.example", []*http.Cookie{{Name: referral.CookieName, Value: "old"}}, "old"},
		{"http://localhost:8080", []*http.Cookie{{Name: "__Host-" + referral.CookieName, Value: "new"}}, ""},
		{"http://localhost:8080", []*http.Cookie{{Name: referral.CookieName, Value: "plain"}}, "plain"},
	} {
		base, _ := url.Parse(tc.base)
		s := &Server{cfg: &config.Config{BaseURL: base}}
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest("GET", "/checkout", nil)
		for _, ck := range tc.cookies {
			c.Request.AddCookie(ck)
		}
		if got := s.referralCookie(c); got != tc.want {
			t.Errorf("%s with %v: %q, want %q", tc.base, tc.cookies, got, tc.want)
		}
	}
}
