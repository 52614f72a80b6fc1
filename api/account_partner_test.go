package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/domaind/domaind/models"
)

// An approved partner manages its credentials and webhook on its account
// page, in a real browser: issues a live credential with two scopes (its
// secret shown once, and it signs), sends a test event to its endpoint
// and sees the delivery, and revokes the credential.
func TestBrowserAccountPartner(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := newChromium(t)
	bg := context.Background()
	newBrowser(t, env).signUp("seller@example.com", "a-long-password")
	var u models.User
	if err := env.db.Take(&u, "email = ?", "seller@example.com").Error; err != nil {
		t.Fatal(err)
	}
	p, err := env.srv.svc.Partners.Apply(bg, u.ID, "Seller's Shop", "seller@example.com")
	if err == nil {
		_, err = env.srv.svc.Partners.Approve(bg, p.ID)
	}
	if err != nil {
		t.Fatal(err)
	}
	site := serveTestSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	if _, err := env.srv.svc.Webhooks.Register(bg, p.ID, models.EnvSandbox, strings.Replace(site, "site.example.net", testSiteAddr, 1)+"/hook",
		"whsec-0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	text := pageText(t, ctx)
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/login"),
		chromedp.SendKeys(chromedp.CSS("#email"), "seller@example.com"),
		chromedp.SendKeys(chromedp.CSS("#password"), "a-long-password"),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#issue-credential")))
	if err != nil {
		t.Fatalf("signing in: %v", err)
	}
	for _, scope := range []string{"embed", "broker", "refer", "report", "webhook"} { // keep search and buy
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#issue-credential input[value="`+scope+`"]`))); err != nil {
			t.Fatal(err)
		}
	}
	err = chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`#issue-credential select[name="environment"]`), "live"),
		chromedp.Click(chromedp.CSS("#issue-credential button")), chromedp.WaitVisible(chromedp.CSS("#issued-secret")))
	if err != nil {
		t.Fatalf("issuing: %v", err)
	}
	checkPage(t, ctx, "account-partner")
	keyID, secret := text("#issued-key-id"), text("#issued-secret")
	cred, err := env.srv.svc.Partners.Authenticate(bg, keyID)
	if err != nil || string(cred.Secret) != secret || cred.Environment != models.EnvLive || strings.Join(cred.Scopes, " ") != "search buy" {
		t.Fatalf("the issued credential = %+v, %v; want a live one with search and buy", cred, err)
	}
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/account"), chromedp.Click(chromedp.CSS(`#endpoint-sandbox + form button`)),
		chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	if err != nil {
		t.Fatalf("sending a test event: %v", err)
	}
	if row := text("#deliveries tbody"); !strings.Contains(row, "test") || !strings.Contains(row, "pending") {
		t.Errorf("the deliveries after the test event = %q", row)
	}
	if strings.Contains(text("body"), secret) {
		t.Error("the secret shows again")
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`tr[id="`+keyID+`"] button`)), chromedp.WaitNotPresent(chromedp.CSS(`tr[id="`+keyID+`"] button`)))
	if err != nil {
		t.Fatalf("revoking: %v", err)
	}
	if _, err := env.srv.svc.Partners.Authenticate(bg, keyID); err == nil {
		t.Error("the revoked credential still authenticates")
	}
}

// A person whose application is pending cannot issue credentials, even by
// posting the form themselves.
func TestAccountPartnerFormsNeedApproval(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := newBrowser(t, env)
	b.signUp("pending@example.com", "a-long-password")
	var u models.User
	env.db.Take(&u, "email = ?", "pending@example.com")
	if _, err := env.srv.svc.Partners.Apply(context.Background(), u.ID, "Pending Shop", "pending@example.com"); err != nil {
		t.Fatal(err)
	}
	form := b.formFields("/account")
	form.Set("environment", "sandbox")
	form.Set("scope", "search")
	res, body := b.form("/account/partner/issue", form)
	var n int64
	env.db.Model(&models.PartnerCredential{}).Count(&n)
	if res.StatusCode != http.StatusConflict || !strings.Contains(body, "not approved yet") || n != 0 {
		t.Errorf("issuing while pending = %d (%d credentials) %s", res.StatusCode, n, body)
	}
}
