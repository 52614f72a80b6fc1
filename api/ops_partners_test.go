package api

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/partnerclient"
)

// Ops take a partner from application to selling on the partners page, in
// a real browser: add it, approve it, set its terms, issue a live
// credential whose secret shows once and signs requests, and revoke it,
// after which its requests are refused. A commission out of range is
// refused with the field named, and changes nothing.
func TestBrowserOpsPartners(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := opsChromium(t)
	text := pageText(t, ctx)
	err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/ops/partners"),
		chromedp.Click(chromedp.CSS("#add-partner-toggle")), // the house seller is listed: the form is folded
		chromedp.SendKeys(chromedp.CSS("#new-name"), "Harbor Names"),
		chromedp.SendKeys(chromedp.CSS("#new-contact"), "deals@harbor.test"),
		chromedp.Click(chromedp.CSS("#add-partner button")),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	if err != nil {
		t.Fatalf("adding a partner: %v", err)
	}
	var p models.Partner
	if err := env.db.Take(&p, "name = ?", "Harbor Names").Error; err != nil || p.Status != models.PartnerPending {
		t.Fatalf("the partner added = %+v, %v", p, err)
	}
	id := p.ID
	sec := "#" + id
	// submit presses a button on a fresh page (no notice on it yet) and
	// waits for the answer's notice or error.
	submit := func(what string, before ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		steps := append([]chromedp.Action[chromedp.Void]{chromedp.Navigate(srv.URL + "/ops/partners"), chromedp.WaitVisible(chromedp.CSS(sec))}, before...)
		if err := chromedp.Do(ctx, chromedp.Steps(append(steps, chromedp.WaitVisible(chromedp.CSS(".notice, .error")))...)); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	submit("approving", chromedp.Click(chromedp.CSS(sec+` form[action$="/approve"] button`)))
	if got := text(sec + " .status"); got != "approved" {
		t.Errorf("status after approving = %q", got)
	}

	// terms submits the terms form, ticking the affiliate box first when
	// affiliate.
	terms := func(commission string, affiliate bool) {
		t.Helper()
		var steps []chromedp.Action[chromedp.Void]
		if affiliate {
			steps = append(steps, chromedp.Click(chromedp.CSS(sec+` input[name="affiliate"]`)))
		}
		submit("saving terms "+commission, append(steps, chromedp.SetValue(chromedp.CSS(sec+` input[name="commission"]`), commission),
			chromedp.Click(chromedp.CSS(sec+` .terms button`)))...)
	}
	terms("12.5", true)
	p, err = env.srv.svc.Partners.Get(context.Background(), id)
	if err != nil || p.CommissionBPS != 1250 || !p.Affiliate {
		t.Errorf("terms saved = %d bps, affiliate %t, %v; want 1250 and an affiliate", p.CommissionBPS, p.Affiliate, err)
	}
	terms("150", false)
	if got := text(".error"); !strings.Contains(got, "commission") {
		t.Errorf("a commission of 150 %% shows %q, want the field named", got)
	}
	if p, _ := env.srv.svc.Partners.Get(context.Background(), id); p.CommissionBPS != 1250 {
		t.Errorf("a refused commission changed it to %d bps", p.CommissionBPS)
	}

	submit("issuing a credential", chromedp.SetValue(chromedp.CSS(sec+` select[name="environment"]`), "live"),
		chromedp.Click(chromedp.CSS(sec+` .issue button`)))
	secret := text("#issued-secret")
	keyID := text("#issued code")
	if !strings.HasPrefix(keyID, "pk_live_") || secret == "" {
		t.Fatalf("issued %q with secret %q, want a live key", keyID, secret)
	}
	checkPage(t, ctx, "ops-partners")
	c := partnerclient.New(srv.URL, keyID, secret, partnerclient.WithClock(func() time.Time { return env.now }),
		partnerclient.WithRetryPolicy(partnerclient.RetryPolicy{MaxAttempts: 1}))
	search := func() error {
		var out struct{}
		return c.GetJSON(context.Background(), "/api/partner/v1/domains/search", url.Values{"q": {"harbor"}}, &out)
	}
	if err := search(); err != nil {
		t.Fatalf("a request signed with the issued credential: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/ops/partners"), chromedp.WaitVisible(chromedp.CSS(sec))); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text("body"), secret) {
		t.Error("the secret shows again after the page that issued it")
	}
	submit("revoking", chromedp.Click(chromedp.CSS("#"+keyID+" button")))
	if got := text("#" + keyID); !strings.Contains(got, "revoked") {
		t.Errorf("the revoked credential's row = %q", got)
	}
	if err := search(); err == nil {
		t.Error("a revoked credential still signs requests")
	}
}

// The ops forms that add a partner and issue a credential, sent again (a
// double click, a reload of their answer), add and issue nothing more: at
// once they answer as the first send did, its secret included; later
// they are refused, with no secret.
func TestOpsFormsSentAgainDoNothingMore(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	page := opsRequest(env, "GET", "/ops/partners", "").Body.String()
	m := onceInput.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the partners page has no once token:\n%s", page)
	}
	add := url.Values{"once": {m[1]}, "name": {"Twice Names"}, "contact_email": {"twice@example.com"}}
	for i, want := range []int{303, 303} {
		if w := opsForm(env, "/ops/partners", add); w.Code != want {
			t.Errorf("adding, send %d = %d %s, want %d", i+1, w.Code, w.Body, want)
		}
	}
	var added []models.Partner
	env.db.Find(&added, "name = ?", "Twice Names")
	if len(added) != 1 {
		t.Fatalf("%d partners added by one form sent twice", len(added))
	}

	m = onceInput.FindStringSubmatch(opsRequest(env, "GET", "/ops/partners", "").Body.String())
	issue := url.Values{"once": {m[1]}, "environment": {"sandbox"}, "scope": {"search"}}
	secret := func(w *httptest.ResponseRecorder) string {
		_, rest, _ := strings.Cut(w.Body.String(), `id="issued-secret">`)
		s, _, _ := strings.Cut(rest, "<")
		return s
	}
	w := opsForm(env, "/ops/partners/"+added[0].ID+"/credentials", issue)
	first := secret(w)
	if w.Code != 201 || first == "" {
		t.Fatalf("issuing = %d %s", w.Code, w.Body)
	}
	if w = opsForm(env, "/ops/partners/"+added[0].ID+"/credentials", issue); w.Code != 201 || secret(w) != first {
		t.Errorf("issuing again at once with the same form = %d, secret %q; want 201 with the first secret", w.Code, secret(w))
	}
	env.now = env.now.Add(3 * time.Minute)
	w = opsForm(env, "/ops/partners/"+added[0].ID+"/credentials", issue)
	if w.Code != 409 || !strings.Contains(w.Body.String(), "sent before") || strings.Contains(w.Body.String(), `id="issued-secret"`) {
		t.Errorf("issuing again three minutes later = %d %s, want 409 and no secret", w.Code, w.Body)
	}
	var n int64
	env.db.Model(&models.PartnerCredential{}).Where("partner_id = ?", added[0].ID).Count(&n)
	if n != 1 {
		t.Errorf("%d credentials issued by one form sent twice", n)
	}
}
