package partner_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/domaind/domaind/internal/brokerage"
	"github.com/domaind/domaind/internal/siteprobe"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/partnerclient"
)

type caseAnswer struct {
	CaseID      string `json:"case_id"`
	Domain      string `json:"domain"`
	Status      string `json:"status"`
	ProgressURL string `json:"progress_url"`
	BudgetCents int64  `json:"budget_cents"`
	Deal        *struct {
		PriceCents      int64 `json:"price_cents"`
		FeeCents        int64 `json:"fee_cents"`
		CommissionCents int64 `json:"commission_cents"`
	} `json:"deal"`
	Timeline []struct {
		Status string  `json:"status"`
		Event  *string `json:"event"`
	} `json:"timeline"`
}

// registered makes the sandbox registry sell .com and hold names as
// registered.
func (e *env) registered(names ...string) {
	e.t.Helper()
	price := int64(1_000)
	if err := e.db.Create(&models.SandboxTLD{Name: "com", RegisterCents: &price}).Error; err != nil {
		e.t.Fatal(err)
	}
	for _, n := range names {
		if err := e.db.Create(&models.SandboxName{Name: n, TLD: "com", State: models.SandboxRegistered}).Error; err != nil {
			e.t.Fatal(err)
		}
	}
}

// opsPost sends an ops JSON POST and returns the answer.
func (e *env) opsPost(path, body string) answer {
	e.t.Helper()
	r, err := http.NewRequest("POST", e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	r.SetBasicAuth("ops", "ops-secret")
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	return e.send(r)
}

// TestBrokerageCase is a partner's brokerage case: eligibility pending
// while the site is probed, then eligible; a case opened under an
// Idempotency-Key (a retry replays), seen by its partner only, worked by
// ops to a deal, and listed with its outcome.
func TestBrokerageCase(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.registered("ownedname.com", "listedname.com")
	e.addSandbox("listedname.com", 90_000)
	cred := e.credential(models.EnvSandbox, "broker", "report")
	c := e.client(cred, 0)

	var elig brokerage.Eligibility
	q := url.Values{"domain": {"ownedname.com"}}
	if err := c.GetJSON(ctx, "/api/partner/v1/brokerage/eligibility", q, &elig); err != nil {
		t.Fatal(err)
	}
	if elig.Status != brokerage.Pending || elig.Eligible != nil || !slices.Equal(elig.Reasons, []string{brokerage.ReasonSiteCheckPending}) {
		t.Errorf("eligibility before the probe = %+v, want pending", elig)
	}
	var probes int64
	e.db.Model(&models.OutboxEntry{}).Where("task_type = ?", "brokerage:probe").Count(&probes)
	if probes != 1 {
		t.Errorf("%d probes queued, want 1", probes)
	}
	body := `{"domain":"ownedname.com","tier":"managed","buyer_email":"ada@buyer.example","budget":1500000}`
	if res := post(t, c, "/api/partner/v1/brokerage", []byte(body), "case-early", nil); res.StatusCode != 409 {
		t.Errorf("a case while the site is checked = %d, want 409", res.StatusCode)
	}
	// The key is optional (SPEC §5.5 requires it on orders only):
	// partnerclient sends one with every POST, so send one without by
	// hand. It passes to the case's own checks: the site is not probed yet.
	got := e.send(e.request(e.sign(cred, "POST", "/api/partner/v1/brokerage", []byte(body))))
	if code, _ := typedCode(t, got); got.status != 409 || code != "conflict" {
		t.Errorf("no Idempotency-Key = %d %s, want the case's own 409 conflict", got.status, code)
	}
	parked := siteprobe.Result{Domain: "ownedname.com", Verdict: siteprobe.Verdict{Reason: siteprobe.ReasonParked}}
	if err := brokerage.RecordProbe(ctx, e.db, parked, e.now); err != nil {
		t.Fatal(err)
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/brokerage/eligibility", q, &elig); err != nil || elig.Status != brokerage.Eligible || elig.Eligible == nil || !*elig.Eligible {
		t.Errorf("eligibility after the probe = %+v, %v; want eligible", elig, err)
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/brokerage/eligibility", url.Values{"domain": {"listedname.com"}}, &elig); err != nil ||
		!slices.Equal(elig.Reasons, []string{brokerage.ReasonListedForSale}) {
		t.Errorf("eligibility of a listed name = %+v, %v", elig, err)
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/brokerage/eligibility", url.Values{"domain": {"a..b"}}, nil); err == nil {
		t.Error("a malformed domain was answered")
	} else {
		wantAPIError(t, "a malformed domain", err, 400, "validation_error")
	}

	for field, bad := range map[string]string{
		"tier":         `{"domain":"ownedname.com","tier":"gold","buyer_email":"ada@buyer.example","budget_cents":1}`,
		"buyer_email":  `{"domain":"ownedname.com","tier":"managed","buyer_email":"ada","budget_cents":1}`,
		"budget_cents": `{"domain":"ownedname.com","tier":"managed","buyer_email":"ada@buyer.example","budget_cents":0}`,
		"domain":       `{"tier":"managed","buyer_email":"ada@buyer.example","budget_cents":1}`,
	} {
		res, b, _ := c.Do(ctx, "POST", "/api/partner/v1/brokerage", nil, []byte(bad), partnerclient.WithIdempotencyKey("bad-"+field))
		if res.StatusCode != 400 || !strings.Contains(string(b), `"field":"`+field+`"`) {
			t.Errorf("a wrong %s = %d %s, want 400 naming it", field, res.StatusCode, b)
		}
	}
	// budget_cents, budget's old name, is taken and announced deprecated.
	listed := `{"domain":"listedname.com","tier":"self_serve","buyer_email":"ada@buyer.example","budget_cents":100000}`
	if res := post(t, c, "/api/partner/v1/brokerage", []byte(listed), "case-listed", nil); res.StatusCode != 409 ||
		!strings.HasPrefix(res.Header.Get("Deprecation"), "@") || !strings.Contains(res.Header.Get("Link"), `rel="deprecation"`) {
		t.Errorf("a listed name by budget_cents = %d, Deprecation %q, Link %q; want 409, deprecated", res.StatusCode,
			res.Header.Get("Deprecation"), res.Header.Get("Link"))
	}

	// The same key as the refusal while the site was checked: that refusal
	// said "retry later", so it was not kept for the key.
	var opened, again caseAnswer
	if res := post(t, c, "/api/partner/v1/brokerage", []byte(body), "case-early", &opened); res.StatusCode != 201 {
		t.Fatalf("open = %d %s", res.StatusCode, res.Header.Get("X-Test-Error-Code"))
	}
	if opened.Status != "open" || !strings.HasPrefix(opened.ProgressURL, "http://api.test/brokerage/progress?t=bp1.") || len(opened.Timeline) != 1 ||
		opened.BudgetCents != 1_500_000 {
		t.Errorf("opened %+v", opened)
	}
	if res := post(t, c, "/api/partner/v1/brokerage", []byte(body), "case-early", &again); res.StatusCode != 201 ||
		again.CaseID != opened.CaseID || res.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("a retry = %d %+v (replayed %q), want the first answer", res.StatusCode, again, res.Header.Get("Idempotent-Replayed"))
	}
	if res := post(t, c, "/api/partner/v1/brokerage", []byte(body), "case-2", nil); res.StatusCode != 409 {
		t.Errorf("a second case for the name = %d, want 409", res.StatusCode)
	}

	other := e.client(e.credential(models.EnvSandbox, "broker"), 0)
	err := other.GetJSON(ctx, "/api/partner/v1/brokerage/"+opened.CaseID, nil, nil)
	wantAPIError(t, "another partner's case", err, 404, "not_found")

	for _, m := range []struct{ action, body string }{
		{"contact-owner", ""},
		{"close-deal", `{"price_cents":1000000}`}, // not yet: no offer
		{"record-offer", `{"amount_cents":1000030,"note":"the owner's ask"}`},
		{"close-deal", `{"price_cents":1000030}`},
	} {
		got := e.opsPost("/api/ops/brokerage/"+opened.CaseID+"/"+m.action, m.body)
		if m.body == `{"price_cents":1000000}` {
			if got.status != 409 || !strings.Contains(string(got.body), "is contacting_owner") {
				t.Errorf("close-deal before an offer = %d %s, want 409 naming the status", got.status, got.body)
			}
			continue
		}
		if got.status != 200 {
			t.Fatalf("%s = %d %s", m.action, got.status, got.body)
		}
	}
	var done caseAnswer
	if err := c.GetJSON(ctx, "/api/partner/v1/brokerage/"+opened.CaseID, nil, &done); err != nil {
		t.Fatal(err)
	}
	if done.Status != "closed_deal" || done.Deal == nil || done.Deal.PriceCents != 1_000_030 || done.Deal.FeeCents != 150_004 ||
		len(done.Timeline) != 4 || done.Timeline[3].Event == nil || *done.Timeline[3].Event != "brokerage.case_completed" {
		t.Errorf("the closed case %+v", done)
	}

	var list struct {
		Cases      []caseAnswer `json:"cases"`
		NextCursor *string      `json:"next_cursor"`
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/brokerage", nil, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Cases) != 1 || list.Cases[0].CaseID != opened.CaseID || list.Cases[0].Deal == nil || list.Cases[0].Timeline != nil || list.NextCursor != nil {
		t.Errorf("list %+v", list)
	}
	var page struct {
		Cases []caseAnswer `json:"cases"`
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/brokerage", url.Values{"status": {"open"}}, &page); err != nil || len(page.Cases) != 0 {
		t.Errorf("open cases = %+v, %v; want none", page, err)
	}
	err = c.GetJSON(ctx, "/api/partner/v1/brokerage", url.Values{"status": {"won"}}, nil)
	wantAPIError(t, "status won", err, 400, "validation_error")
}
