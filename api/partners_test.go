package api

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
)

// opsJSON sends an ops request and decodes a JSON answer into out.
func opsJSON(t *testing.T, env *testEnv, method, path, body string, want int, out any) *httptest.ResponseRecorder {
	t.Helper()
	w := opsRequest(env, method, path, body)
	if w.Code != want {
		t.Fatalf("%s %s = %d %s, want %d", method, path, w.Code, w.Body, want)
	}
	if out != nil {
		if err := json.Unmarshal(w.Body.Bytes(), out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return w
}

// TestOpsManagePartnersAndCredentials: ops create a partner, approve it,
// issue and revoke credentials; a secret is shown once and never listed.
func TestOpsManagePartnersAndCredentials(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	var p partnerView
	opsJSON(t, env, "POST", "/api/ops/partners", `{"name":"Acme Domains","contact_email":"ops@acme.test"}`, 201, &p)
	if p.ID == "" || p.Status != models.PartnerPending || p.CommissionBPS != 1500 {
		t.Fatalf("created partner = %+v, want pending with the default commission", p)
	}
	w := opsRequest(env, "POST", "/api/ops/partners/"+p.ID+"/credentials", `{"environment":"live","scopes":["search"]}`)
	wantError(t, "live key before approval", w, 409, "conflict")

	opsJSON(t, env, "POST", "/api/ops/partners/"+p.ID+"/approve", "", 200, &p)
	if p.Status != models.PartnerApproved || p.ApprovedAt == nil {
		t.Fatalf("approved partner = %+v", p)
	}
	var issued struct {
		KeyID       string   `json:"key_id"`
		Secret      string   `json:"secret"`
		Environment string   `json:"environment"`
		Scopes      []string `json:"scopes"`
	}
	w = opsJSON(t, env, "POST", "/api/ops/partners/"+p.ID+"/credentials", `{"environment":"live","scopes":["webhook","search"]}`, 201, &issued)
	if !strings.HasPrefix(issued.KeyID, "pk_live_") || !strings.HasPrefix(issued.Secret, "sk_") ||
		strings.Join(issued.Scopes, " ") != "search webhook" || w.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("issued = %+v (Cache-Control %q), want a pk_live_ key, its secret, scopes in order, no-store", issued, w.Header().Get("Cache-Control"))
	}
	var sandboxKey struct {
		KeyID string `json:"key_id"`
	}
	opsJSON(t, env, "POST", "/api/ops/partners/"+p.ID+"/credentials", `{"environment":"sandbox","scopes":["search"]}`, 201, &sandboxKey)
	if !strings.HasPrefix(sandboxKey.KeyID, "pk_test_") {
		t.Errorf("sandbox key id %q, want pk_test_", sandboxKey.KeyID)
	}

	var list struct {
		Partners []partnerView `json:"partners"`
		Count    int           `json:"count"`
	}
	w = opsJSON(t, env, "GET", "/api/ops/partners", "", 200, &list)
	i := slices.IndexFunc(list.Partners, func(v partnerView) bool { return v.ID == p.ID })
	if list.Count != 2 || i < 0 || len(list.Partners[i].Credentials) != 2 || strings.Contains(w.Body.String(), issued.Secret) ||
		!slices.ContainsFunc(list.Partners, func(v partnerView) bool { return v.ID == models.HousePartnerID }) {
		t.Errorf("list = %s, want the house seller, and the partner with two credentials and no secret", w.Body)
	}
	opsJSON(t, env, "DELETE", "/api/ops/partners/"+p.ID+"/credentials/"+issued.KeyID, "", 204, nil)
	w = opsRequest(env, "DELETE", "/api/ops/partners/"+p.ID+"/credentials/"+issued.KeyID, "")
	wantError(t, "revoke twice", w, 404, "not_found")
	opsJSON(t, env, "GET", "/api/ops/partners", "", 200, &list)
	for _, c := range list.Partners[0].Credentials {
		if (c.KeyID == issued.KeyID) != (c.RevokedAt != nil) {
			t.Errorf("credential %s revoked_at %v after revoking %s", c.KeyID, c.RevokedAt, issued.KeyID)
		}
	}

	var stored models.PartnerCredential
	env.db.Take(&stored, "key_id = ?", issued.KeyID)
	if strings.Contains(string(stored.SecretSealed), issued.Secret) {
		t.Error("the secret is stored in plain text")
	}
}

// TestOpsPartnerRoutesRefuseBadInput: each refusal is typed, names its
// field, and changes nothing; without the ops login nothing is reached.
func TestOpsPartnerRoutesRefuseBadInput(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	var p partnerView
	opsJSON(t, env, "POST", "/api/ops/partners", `{"name":"Acme","contact_email":"ops@acme.test"}`, 201, &p)
	for _, tc := range []struct{ name, method, path, body string }{
		{"no name", "POST", "/api/ops/partners", `{"contact_email":"ops@acme.test"}`},
		{"bad email", "POST", "/api/ops/partners", `{"name":"Acme","contact_email":"not-an-email"}`},
		{"unknown field", "POST", "/api/ops/partners", `{"name":"Acme","contact_email":"ops@acme.test","admin":true}`},
		{"bad environment", "POST", "/api/ops/partners/" + p.ID + "/credentials", `{"environment":"prod","scopes":["search"]}`},
		{"no scopes", "POST", "/api/ops/partners/" + p.ID + "/credentials", `{"environment":"sandbox","scopes":[]}`},
		{"unknown scope", "POST", "/api/ops/partners/" + p.ID + "/credentials", `{"environment":"sandbox","scopes":["admin"]}`},
		{"bad listing domain", "POST", "/api/ops/listings", `{"domain":"not a domain","bin_cents":1000,"environment":"sandbox"}`},
		{"negative price", "POST", "/api/ops/listings", `{"domain":"fine.com","bin_cents":-5,"environment":"sandbox"}`},
		{"floor above price", "POST", "/api/ops/listings", `{"domain":"fine.com","bin_cents":1000,"floor_cents":5000,"environment":"sandbox"}`},
		{"listing environment", "POST", "/api/ops/listings", `{"domain":"fine.com","bin_cents":1000,"environment":"staging"}`},
	} {
		wantError(t, tc.name, opsRequest(env, tc.method, tc.path, tc.body), 400, "validation_error")
	}
	wantError(t, "unknown partner", opsRequest(env, "POST", "/api/ops/partners/ptn_nosuch/approve", ""), 404, "not_found")
	r := httptest.NewRequest("POST", "/api/ops/partners", strings.NewReader(`{"name":"Sneaky","contact_email":"s@x.test"}`))
	r.Header.Set("Content-Type", "application/json")
	if w := env.do(r); w.Code != 401 {
		t.Errorf("without the ops login = %d, want 401", w.Code)
	}
	var partners, creds, sandbox int64
	env.db.Model(&models.Partner{}).Count(&partners)
	env.db.Model(&models.PartnerCredential{}).Count(&creds)
	env.db.Model(&models.SandboxListing{}).Count(&sandbox)
	if partners != 2 || creds != 0 || sandbox != 0 { // the house seller and the one made
		t.Errorf("after refusals: %d partners, %d credentials, %d sandbox listings; want 2, 0, 0", partners, creds, sandbox)
	}
}

// TestOpsListings: ops add a name to either inventory and take it away.
func TestOpsListings(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	var l struct {
		ID, Domain, Environment string
		BINCents                *int64 `json:"bin_cents"`
	}
	opsJSON(t, env, "POST", "/api/ops/listings", `{"domain":"BudgetAirfare.com","bin_cents":150000,"floor_cents":90000,"environment":"sandbox"}`, 201, &l)
	if l.Domain != "budgetairfare.com" || l.Environment != "sandbox" || l.BINCents == nil || *l.BINCents != 150000 {
		t.Errorf("added = %+v", l)
	}
	wantError(t, "the same name again", opsRequest(env, "POST", "/api/ops/listings", `{"domain":"budgetairfare.com","bin_cents":1000,"environment":"sandbox"}`), 409, "conflict")
	var live struct{ ID string }
	opsJSON(t, env, "POST", "/api/ops/listings", `{"domain":"budgetairfare.com","bin_cents":990000,"environment":"live"}`, 201, &live)
	var listing models.Listing
	if err := env.db.Take(&listing, "id = ?", live.ID).Error; err != nil || !listing.Approved || !listing.MarketplaceVisible {
		t.Errorf("live listing %+v, %v; want an approved, visible marketplace listing", listing, err)
	}
	wantError(t, "removing from the wrong inventory", opsRequest(env, "DELETE", "/api/ops/listings/"+l.ID+"?environment=live", ""), 404, "not_found")
	opsJSON(t, env, "DELETE", "/api/ops/listings/"+l.ID+"?environment=sandbox", "", 204, nil)
	var n int64
	env.db.Model(&models.SandboxListing{}).Count(&n)
	if n != 0 {
		t.Errorf("%d sandbox listings after removal", n)
	}
}

// TestPartnerApplicationOverJSON: a signed-in person applies once; ops
// approve; the sandbox credential issued is theirs.
func TestPartnerApplicationOverJSON(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := newBrowser(t, env)
	if res, _ := b.json("POST", "/api/partner/applications", `{"name":"Shop"}`); res.StatusCode != 401 {
		t.Errorf("signed out = %d, want 401", res.StatusCode)
	}
	csrf := b.signUp("seller@example.com", "long-enough-pw")
	if res, _ := b.json("POST", "/api/partner/applications", `{"name":"Shop"}`); res.StatusCode != 403 {
		t.Errorf("without the CSRF token = %d, want 403", res.StatusCode)
	}
	res, body := b.json("POST", "/api/partner/applications", `{"name":"Seller's Shop"}`, "X-CSRF-Token", csrf)
	var p partnerView
	if res.StatusCode != 201 || json.Unmarshal([]byte(body), &p) != nil || p.Status != models.PartnerPending || p.ContactEmail != "seller@example.com" {
		t.Fatalf("apply = %d %s, want 201 pending with the account's email", res.StatusCode, body)
	}
	if res, body := b.json("POST", "/api/partner/applications", `{"name":"Again"}`, "X-CSRF-Token", csrf); res.StatusCode != 409 {
		t.Errorf("second application = %d %s, want 409", res.StatusCode, body)
	}
	opsJSON(t, env, "POST", "/api/ops/partners/"+p.ID+"/approve", "", 200, nil)
	var creds []models.PartnerCredential
	env.db.Find(&creds, "partner_id = ?", p.ID)
	if len(creds) != 1 || creds[0].Environment != models.EnvSandbox {
		t.Errorf("credentials after approval: %+v, want one sandbox credential", creds)
	}
}

// A sandbox credential sealed under another secret key than the
// service's cannot be shown: the account page still opens, every time,
// saying so, and the credential stays for when it can be.
func TestAnUnreadableCredentialLeavesTheAccountPageUsable(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := newBrowser(t, env)
	csrf := b.signUp("rekeyed@example.com", "long-enough-pw")
	res, body := b.json("POST", "/api/partner/applications", `{"name":"Rekeyed Shop"}`, "X-CSRF-Token", csrf)
	var p partnerView
	if res.StatusCode != 201 || json.Unmarshal([]byte(body), &p) != nil {
		t.Fatalf("apply = %d %s", res.StatusCode, body)
	}
	opsJSON(t, env, "POST", "/api/ops/partners/"+p.ID+"/approve", "", 200, nil)
	sealedElsewhere := sealElsewhere(t, env, p.ID)
	for i := range 2 {
		res, body := b.do("GET", "/account", "", "")
		if res.StatusCode != 200 || !strings.Contains(body, `id="partner-credential-unreadable"`) || !strings.Contains(body, `id="credentials"`) {
			t.Fatalf("load %d of the account page = %d, want 200 with its credentials and the notice:\n%s", i+1, res.StatusCode, body)
		}
	}
	var kept models.Partner
	if err := env.db.Take(&kept, "id = ?", p.ID).Error; err != nil || string(kept.UnseenCredential) != string(sealedElsewhere) {
		t.Errorf("the credential after the page = %q, %v; want it kept", kept.UnseenCredential, err)
	}
}

// sealElsewhere gives partner id an unseen credential sealed under
// another secret key than env's, and returns it.
func sealElsewhere(t *testing.T, env *testEnv, id string) []byte {
	t.Helper()
	sealed := secret.NewSealer([]byte("another-secret-key-0123456789abc"), "partner secrets").Seal([]byte("pk_test_x\x00s"))
	if err := env.db.Model(&models.Partner{}).Where("id = ?", id).Update("unseen_credential", sealed).Error; err != nil {
		t.Fatal(err)
	}
	return sealed
}

// A person applies on the account page in a real browser; once ops
// approve, the page shows the sandbox credential once, then never again.
// One the service cannot open is said to be so.
func TestBrowserPartnerApplication(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := newChromium(t)
	steps := chromedp.Steps(
		chromedp.Navigate(srv.URL+"/signup"),
		chromedp.SendKeys(chromedp.CSS("#email"), "seller@example.com"),
		chromedp.SendKeys(chromedp.CSS("#password"), "a-long-password"),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS(".notice")),
		chromedp.SendKeys(chromedp.CSS("#email"), "seller@example.com"),
		chromedp.SendKeys(chromedp.CSS("#password"), "a-long-password"),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/account/partner-application"]`)),
		chromedp.SendKeys(chromedp.CSS(`form[action="/account/partner-application"] input[name="name"]`), "Seller's Shop"),
		chromedp.Click(chromedp.CSS(`form[action="/account/partner-application"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#partner-status")),
	)
	if err := chromedp.Do(ctx, steps); err != nil {
		t.Fatalf("apply on the account page: %v", err)
	}
	pending, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#partner-status")))
	if err != nil {
		t.Fatal(err)
	}
	var p models.Partner
	if err := env.db.Take(&p, "name = ?", "Seller's Shop").Error; err != nil {
		t.Fatalf("no application recorded: %v", err)
	}
	opsJSON(t, env, "POST", "/api/ops/partners/"+p.ID+"/approve", "", 200, nil)
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#partner-credential"))); err != nil {
		t.Fatalf("the credential after approval: %v", err)
	}
	keyID, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#key-id")))
	if err != nil {
		t.Fatal(err)
	}
	secret, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#key-secret")))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#partner-status"))); err != nil {
		t.Fatal(err)
	}
	again, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pending, "pending") || !strings.HasPrefix(keyID, "pk_test_") || !strings.HasPrefix(secret, "sk_") ||
		strings.Contains(again, secret) || !strings.Contains(again, "approved") {
		t.Errorf("pending %q; credential %q / %q; page after %q: want the secret shown once", pending, keyID, secret, again)
	}
	cred, err := env.srv.svc.Partners.Authenticate(t.Context(), keyID)
	if err != nil || string(cred.Secret) != secret {
		t.Errorf("the shown credential does not authenticate: %v", err)
	}
	sealElsewhere(t, env, p.ID)
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#partner-credential-unreadable"))); err != nil {
		t.Fatalf("a credential that cannot be opened: %v", err)
	}
	checkPage(t, ctx, "account-credential-unreadable")
}
