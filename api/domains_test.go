package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/demo"
	"github.com/domaind/domaind/internal/domains"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/registry/sandbox"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/worker"
)

// owner is a signed-in browser with a portfolio of demo domains.
type owner struct {
	*browser
	csrf    string
	user    models.User
	domains []models.Domain // by name
}

// newOwner signs up email and gives the account n demo domains (registered
// in the sandbox registry too).
func newOwner(t testing.TB, env *testEnv, email string, n int) *owner {
	t.Helper()
	b := newBrowser(t, env)
	o := &owner{browser: b, csrf: b.signUp(email, "correct horse battery")}
	if err := env.db.First(&o.user, "email = ?", email).Error; err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		if _, err := demo.Domains(context.Background(), env.db, o.user.ID, n, 42, env.now); err != nil {
			t.Fatal(err)
		}
	}
	env.db.Where("user_id = ?", o.user.ID).Order("name").Find(&o.domains)
	return o
}

// names are the first n of the owner's domain names.
func (o *owner) names(n int) []string {
	var out []string
	for _, d := range o.domains[:n] {
		out = append(out, d.Name)
	}
	return out
}

// withStatus are the owner's domain names in status.
func (o *owner) withStatus(status string) []string {
	var out []string
	for _, d := range o.domains {
		if d.Status == status {
			out = append(out, d.Name)
		}
	}
	return out
}

func (o *owner) bulk(op string, body any) (*http.Response, string) {
	o.tb.Helper()
	b, _ := json.Marshal(body)
	return o.json("POST", "/api/domains/bulk/"+op, string(b), HeaderCSRFToken, o.csrf)
}

// bulkStatus is GET /api/domains/bulk/{id}.
type bulkStatus struct {
	BulkOpID string         `json:"bulkOpId"`
	Op       string         `json:"op"`
	Status   string         `json:"status"`
	Error    string         `json:"error"`
	Total    int            `json:"total"`
	DryRun   bool           `json:"dryRun"`
	Counts   map[string]int `json:"counts"`
	Progress struct{ Done, Planned int }
	Items    []bulkItemView `json:"items"`
	Page     struct {
		Total   int  `json:"total"`
		HasMore bool `json:"has_more"`
	} `json:"page"`
}

func (o *owner) status(id, query string) (int, bulkStatus) {
	o.tb.Helper()
	res, body := o.json("GET", "/api/domains/bulk/"+id+query, "")
	var st bulkStatus
	if res.StatusCode == 200 {
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			o.tb.Fatalf("status body %s: %v", body, err)
		}
	}
	return res.StatusCode, st
}

// waitTerminal polls the op until it is done or failed.
func (o *owner) waitTerminal(id string) bulkStatus {
	o.tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, st := o.status(id, "?limit=200")
		if code != 200 {
			o.tb.Fatalf("status of %s = %d", id, code)
		}
		if st.Status == models.BulkDone || st.Status == models.BulkFailed {
			return st
		}
		if time.Now().After(deadline) {
			o.tb.Fatalf("bulk op %s still %s after 30 s: %+v", id, st.Status, st.Counts)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDomainRoutesNeedASessionAndItsCSRFToken(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	anon := newBrowser(t, env)
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/api/domains", ""},
		{"POST", "/api/domains/bulk/lock", `{"domains":["example.com"]}`},
		{"GET", "/api/domains/bulk/bop_0123456789abcdef01234567", ""},
		{"GET", "/api/cart", ""},
		{"DELETE", "/api/cart/items/cart_0123456789abcdef01234567", ""},
	} {
		res, body := anon.json(r.method, r.path, r.body)
		if res.StatusCode != 401 || !strings.Contains(body, `"unauthorized"`) {
			t.Errorf("%s %s without a session = %d %s, want 401", r.method, r.path, res.StatusCode, body)
		}
	}
	o := newOwner(t, env, "owner@example.com", 5)
	res, body := o.json("POST", "/api/domains/bulk/lock", fmt.Sprintf(`{"domains":[%q]}`, o.domains[0].Name))
	if res.StatusCode != 403 || !strings.Contains(body, "csrf_failed") {
		t.Errorf("bulk without the CSRF token = %d %s, want 403", res.StatusCode, body)
	}
}

func TestListDomainsPagesAndFilters(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	o := newOwner(t, env, "owner@example.com", 300)
	newOwner(t, env, "other@example.com", 0) // owns nothing: sees nothing of o's
	type page struct {
		Items []domainView  `json:"items"`
		Page  httpjson.Page `json:"page"`
	}
	get := func(query string) page {
		t.Helper()
		res, body := o.json("GET", "/api/domains"+query, "")
		if res.StatusCode != 200 {
			t.Fatalf("GET /api/domains%s = %d %s", query, res.StatusCode, body)
		}
		var p page
		json.Unmarshal([]byte(body), &p)
		return p
	}
	// Walk by cursor and by offset: the same names, in name order.
	var byCursor, byOffset []string
	for p, cursor := get("?limit=70"), ""; ; p = get("?limit=70&cursor=" + cursor) {
		for _, d := range p.Items {
			byCursor = append(byCursor, d.Domain)
		}
		if p.Page.Total != 300 {
			t.Fatalf("total = %d, want 300", p.Page.Total)
		}
		if !p.Page.HasMore {
			if p.Page.NextCursor != nil {
				t.Error("last page has a next_cursor")
			}
			break
		}
		cursor = *p.Page.NextCursor
	}
	for off := 0; off < 300; off += 70 {
		for _, d := range get(fmt.Sprintf("?limit=70&offset=%d", off)).Items {
			byOffset = append(byOffset, d.Domain)
		}
	}
	want := o.names(300)
	if strings.Join(byCursor, ",") != strings.Join(want, ",") || strings.Join(byOffset, ",") != strings.Join(want, ",") {
		t.Errorf("walks differ from the owner's names in order:\ncursor %d names, offset %d names", len(byCursor), len(byOffset))
	}

	count := func(keep func(models.Domain) bool) int {
		n := 0
		for _, d := range o.domains {
			if keep(d) {
				n++
			}
		}
		return n
	}
	soon := env.now.AddDate(0, 0, 30)
	filters := []struct {
		query string
		keep  func(models.Domain) bool
	}{
		{"?tld=net", func(d models.Domain) bool { return d.TLD == "net" }},
		{"?status=redemption", func(d models.Domain) bool { return d.Status == models.DomainRedemption }},
		{"?folder=clients", func(d models.Domain) bool { return d.Folder == "clients" }},
		{"?folder=", func(d models.Domain) bool { return d.Folder == "" }},
		{"?expiring_before=" + soon.Format(time.RFC3339), func(d models.Domain) bool { return d.ExpiresAt.Before(soon) }},
		{"?q=blue&tld=com", func(d models.Domain) bool { return strings.Contains(d.Name, "blue") && d.TLD == "com" }},
	}
	for _, f := range filters {
		p := get(f.query + "&limit=200")
		want := count(f.keep)
		if int(p.Page.Total) != want || want == 0 {
			t.Errorf("%s: total %d, want %d (and more than none)", f.query, p.Page.Total, want)
		}
		for _, d := range p.Items {
			var row models.Domain
			env.db.First(&row, "name = ?", d.Domain)
			if !f.keep(row) {
				t.Errorf("%s returned %s, which does not match", f.query, d.Domain)
			}
		}
	}

	first := get("?limit=1").Items[0]
	if first.Domain != o.domains[0].Name || len(first.Nameservers) < 2 || first.ExpiresAt.IsZero() || first.Status == "" {
		t.Errorf("item = %+v", first)
	}
	cur := *get("?limit=5&tld=com").Page.NextCursor
	for _, bad := range []struct{ query, code string }{
		{"?limit=0", "validation_error"}, {"?limit=201", "validation_error"}, {"?offset=-1", "validation_error"},
		{"?status=gone", "validation_error"}, {"?expiring_before=soon", "validation_error"}, {"?tld=-x-", "validation_error"},
		{"?cursor=garbage", "invalid_cursor"}, {"?tld=net&cursor=" + cur, "invalid_cursor"},
	} {
		res, body := o.json("GET", "/api/domains"+bad.query, "")
		if res.StatusCode != 400 || !strings.Contains(body, `"`+bad.code+`"`) {
			t.Errorf("GET /api/domains%s = %d %s, want 400 %s", bad.query, res.StatusCode, body, bad.code)
		}
	}
}

// noBulkWork reports the rows a refused bulk request must not have written.
func noBulkWork(t *testing.T, env *testEnv, what string) {
	t.Helper()
	var ops, outbox, cart int64
	env.db.Model(&models.BulkOp{}).Count(&ops)
	env.db.Model(&models.OutboxEntry{}).Count(&outbox)
	env.db.Model(&models.CartItem{}).Count(&cart)
	if ops+outbox+cart != 0 {
		t.Errorf("%s wrote %d bulk ops, %d outbox entries, %d cart items; want none", what, ops, outbox, cart)
	}
}

func TestBulkRefusesBadRequestsAndChangesNothing(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	o := newOwner(t, env, "owner@example.com", 40)
	stranger := newOwner(t, env, "stranger@example.com", 0)
	mine := o.names(3)
	active := o.withStatus(models.DomainActive)[:2]
	var nl []string
	for _, d := range o.domains {
		if d.TLD == "nl" {
			nl = append(nl, d.Name)
		}
	}
	many := make([]string, 1001)
	for i := range many {
		many[i] = fmt.Sprintf("name%d.com", i)
	}
	type req = map[string]any
	tests := []struct {
		what, op string
		body     any
		status   int
		code     string
		mention  string
	}{
		{"unknown op", "transfer", req{"domains": mine}, 400, "validation_error", "unknown bulk operation"},
		{"no body", "lock", nil, 400, "bad_request", "empty"},
		{"empty list", "lock", req{"domains": []string{}}, 400, "validation_error", "1 to 1000"},
		{"1001 domains", "lock", req{"domains": many}, 400, "validation_error", "at most 1000"},
		{"bad name", "lock", req{"domains": []string{mine[0], "not a domain"}}, 400, "validation_error", "domains[1]"},
		{"a subdomain", "lock", req{"domains": []string{"www." + mine[0]}}, 400, "validation_error", "not a registered name"},
		{"wrong type", "lock", req{"domains": "example.com"}, 400, "validation_error", "domains"},
		{"unknown field", "lock", req{"domains": mine, "extra": 1}, 400, "validation_error", "extra"},
		{"one nameserver", "setNameservers", req{"domains": mine, "payload": req{"nameservers": []string{"ns1.example.net"}}}, 400, "validation_error", "2 to 13"},
		{"bad nameserver", "setNameservers", req{"domains": mine, "payload": req{"nameservers": []string{"ns1.example.net", "ns 2"}}}, 400, "validation_error", "nameservers[1]"},
		{"repeated nameserver", "setNameservers", req{"domains": mine, "payload": req{"nameservers": []string{"ns1.example.net", "NS1.example.net"}}}, 400, "validation_error", "twice"},
		{"folder missing", "setFolder", req{"domains": mine, "payload": req{}}, 400, "validation_error", "payload.folder"},
		{"folder too long", "setFolder", req{"domains": mine, "payload": req{"folder": strings.Repeat("f", 65)}}, 400, "validation_error", "at most 64"},
		{"unknown role", "setContacts", req{"domains": mine, "payload": req{"contacts": req{"owner": "ACME-1"}}}, 400, "validation_error", "unknown role"},
		{"bad handle", "setContacts", req{"domains": mine, "payload": req{"contacts": req{"admin": "a b"}}}, 400, "validation_error", "handle"},
		{"contact without email", "setContacts", req{"domains": mine, "payload": req{"contacts": req{"tech": req{"name": "Ada", "phone": "+44.2071234567", "street": "1 St", "city": "London", "postal_code": "N1", "country": "GB"}}}}, 400, "validation_error", "email"},
		{"no contacts", "setContacts", req{"domains": mine, "payload": req{}}, 400, "validation_error", "at least one role"},
		{"auto_renew missing", "setAutoRenew", req{"domains": mine, "payload": req{}}, 400, "validation_error", "auto_renew"},
		{"auto_renew not boolean", "setAutoRenew", req{"domains": mine, "payload": req{"auto_renew": "yes"}}, 400, "validation_error", "payload"},
		{"11 years", "renew", req{"domains": mine, "payload": req{"years": 11}}, 400, "validation_error", "1 to 10"},
		{"years the TLD does not sell", "renew", req{"domains": nl, "payload": req{"years": 2}}, 400, "validation_error", ".nl renews for 1 years"},
		{"restore of active domains", "restore", req{"domains": active}, 400, "validation_error", "not in redemption"},
		{"not the owner", "lock", req{"domains": []string{mine[0], "nobody-owns-this.com", mine[1]}}, 403, "forbidden", "nobody-owns-this.com"},
	}
	for _, tc := range tests {
		var res *http.Response
		var body string
		if tc.body == nil {
			res, body = o.json("POST", "/api/domains/bulk/"+tc.op, "", HeaderCSRFToken, o.csrf)
		} else {
			res, body = o.bulk(tc.op, tc.body)
		}
		if res.StatusCode != tc.status || !strings.Contains(body, `"`+tc.code+`"`) || !strings.Contains(body, tc.mention) {
			t.Errorf("%s: %d %s, want %d %s mentioning %q", tc.what, res.StatusCode, body, tc.status, tc.code, tc.mention)
		}
	}
	// Someone else's domains are refused by name, and nothing is applied.
	res, body := stranger.bulk("lock", req{"domains": mine})
	if res.StatusCode != 403 || !strings.Contains(body, mine[0]) {
		t.Errorf("stranger's lock = %d %s, want 403 naming %s", res.StatusCode, body, mine[0])
	}
	noBulkWork(t, env, "refused requests")
}

// flakyRegistry fails the first failures calls per domain with a temporary
// error and always fails the names in refuse; it counts calls per change.
type flakyRegistry struct {
	registry.Provider
	failures int
	refuse   map[string]bool
	mu       sync.Mutex
	calls    map[string]int
}

func (f *flakyRegistry) UpdateDomain(ctx context.Context, name string, u registry.Update, change string) error {
	f.mu.Lock()
	f.calls[change]++
	n := f.calls[change]
	f.mu.Unlock()
	if f.refuse[name] {
		return fmt.Errorf("%s: object status prohibits operation: %w", name, errors.ErrUnsupported)
	}
	if n <= f.failures {
		return fmt.Errorf("connection reset: %w", registry.ErrTransient)
	}
	return f.Provider.UpdateDomain(ctx, name, u, change)
}

func TestBulkLockAppliesEveryItemOnceThroughTheWorker(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	o := newOwner(t, env, "owner@example.com", 120)
	reg := &flakyRegistry{Provider: sandbox.New(env.db, 0), failures: 2, calls: map[string]int{}}
	startWorker(t, env, worker.Deps{Registry: reg})

	names := append(o.names(100), strings.ToUpper(o.domains[0].Name)) // a repeat, differently spelt
	res, body := o.bulk("lock", map[string]any{"domains": names})
	if res.StatusCode != 200 {
		t.Fatalf("lock = %d %s", res.StatusCode, body)
	}
	var queued struct {
		BulkOpID string `json:"bulkOpId"`
		Total    int    `json:"total"`
		Op       string `json:"op"`
	}
	json.Unmarshal([]byte(body), &queued)
	if !secret.IsID(queued.BulkOpID, domains.BulkOpPrefix) || queued.Total != 100 || queued.Op != "lock" {
		t.Fatalf("answer = %s, want a bulk op id, total 100 (the repeat removed), op lock", body)
	}
	st := o.waitTerminal(queued.BulkOpID)
	if st.Status != models.BulkDone || st.Counts["done"] != 100 || st.Counts["failed"]+st.Counts["skipped"]+st.Counts["pending"] != 0 {
		t.Fatalf("status = %s %+v, want done with 100 done", st.Status, st.Counts)
	}
	if st.Progress.Done != 100 || st.Progress.Planned != 100 || len(st.Items) != 100 || st.Items[0].Domain != names[0] || st.Items[0].Status != "done" {
		t.Errorf("progress %+v, %d items, first %+v", st.Progress, len(st.Items), st.Items[0])
	}
	var locked, changes int64
	env.db.Model(&models.Domain{}).Where("user_id = ? AND name IN ? AND locked", o.user.ID, names[:100]).Count(&locked)
	env.db.Model(&models.SandboxChange{}).Count(&changes)
	if locked != 100 || changes != 100 {
		t.Errorf("%d domains locked and %d registry changes, want 100 and 100", locked, changes)
	}
	for change, n := range reg.calls {
		if n != 3 { // two temporary failures, then the change
			t.Errorf("change %s sent %d times, want 3", change, n)
		}
	}

	// Paging and filtering the items; the op is its owner's only.
	if code, p := o.status(queued.BulkOpID, "?limit=10&offset=95"); code != 200 || len(p.Items) != 5 || p.Page.HasMore || p.Page.Total != 100 {
		t.Errorf("last page = %d, %d items, %+v", code, len(p.Items), p.Page)
	}
	if code, p := o.status(queued.BulkOpID, "?status=failed"); code != 200 || len(p.Items) != 0 || p.Page.Total != 0 {
		t.Errorf("failed items = %d %+v", code, p.Page)
	}
	other := newOwner(t, env, "other@example.com", 0)
	if code, _ := other.status(queued.BulkOpID, ""); code != 404 {
		t.Errorf("another user's view of the op = %d, want 404", code)
	}
	if code, _ := o.status("bop_0123456789abcdef01234567", ""); code != 404 {
		t.Errorf("unknown op = %d, want 404", code)
	}
	for _, bad := range []string{"123", "bop_XYZ", "job_0123456789abcdef01234567"} {
		if code, _ := o.status(bad, ""); code != 400 {
			t.Errorf("status of %q = %d, want 400", bad, code)
		}
	}
}

func TestBulkFailuresAreRecordedOrStopTheOp(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	o := newOwner(t, env, "owner@example.com", 200)
	refused := o.domains[10].Name
	reg := &flakyRegistry{Provider: sandbox.New(env.db, 0), refuse: map[string]bool{refused: true}, calls: map[string]int{}}
	startWorker(t, env, worker.Deps{Registry: reg})
	ns := []string{"ns1.newhost.example", "ns2.newhost.example"}

	// skip_on_error (the default): the failure is recorded, the rest applied.
	res, body := o.bulk("setNameservers", map[string]any{"domains": o.names(30), "payload": map[string]any{"nameservers": ns}})
	if res.StatusCode != 200 {
		t.Fatalf("setNameservers = %d %s", res.StatusCode, body)
	}
	var q struct{ BulkOpID string }
	json.Unmarshal([]byte(body), &q)
	st := o.waitTerminal(q.BulkOpID)
	if st.Status != models.BulkDone || st.Counts["done"] != 29 || st.Counts["failed"] != 1 {
		t.Errorf("skip_on_error op: %s %+v, want done with 29 done and 1 failed", st.Status, st.Counts)
	}
	_, failed := o.status(q.BulkOpID, "?status=failed")
	if len(failed.Items) != 1 || failed.Items[0].Domain != refused || !strings.Contains(failed.Items[0].Error, "registry refused the change") {
		t.Errorf("failed items = %+v", failed.Items)
	}
	var d models.Domain
	env.db.First(&d, "name = ?", o.domains[0].Name)
	if strings.Join(d.Nameservers, ",") != strings.Join(ns, ",") {
		t.Errorf("nameservers of %s = %v, want %v", d.Name, d.Nameservers, ns)
	}

	// skip_on_error false: the first failure stops the op; the rest is
	// skipped. Up to BulkConcurrency items are in flight when the failure
	// is recorded and finish; with 200 items many are still waiting.
	res, body = o.bulk("unlock", map[string]any{"domains": o.names(200), "options": map[string]any{"skip_on_error": false}})
	json.Unmarshal([]byte(body), &q)
	st = o.waitTerminal(q.BulkOpID)
	if st.Status != models.BulkFailed || st.Counts["failed"] != 1 || st.Counts["skipped"] == 0 || st.Counts["pending"] != 0 ||
		st.Counts["done"]+st.Counts["failed"]+st.Counts["skipped"] != 200 || !strings.Contains(st.Error, refused) {
		t.Errorf("stopping op: %s %q %+v, want failed naming %s with the rest skipped", st.Status, st.Error, st.Counts, refused)
	}
}

func TestBulkDryRunReportsAndAppliesNothing(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	o := newOwner(t, env, "owner@example.com", 10)
	env.db.Model(&models.Domain{}).Where("user_id = ?", o.user.ID).Update("folder", "clients")
	res, body := o.bulk("setFolder", map[string]any{"domains": o.names(10), "payload": map[string]any{"folder": "  archive "}, "options": map[string]any{"dry_run": true}})
	if res.StatusCode != 200 {
		t.Fatalf("dry run = %d %s", res.StatusCode, body)
	}
	var q struct{ BulkOpID string }
	json.Unmarshal([]byte(body), &q)
	_, st := o.status(q.BulkOpID, "")
	if st.Status != models.BulkDone || !st.DryRun || len(st.Items) != 10 {
		t.Fatalf("dry run status = %+v", st)
	}
	if want := "folder: clients → archive"; st.Items[0].Change != want {
		t.Errorf("change = %q, want %q", st.Items[0].Change, want)
	}
	var moved, outbox int64
	env.db.Model(&models.Domain{}).Where("folder = ?", "archive").Count(&moved)
	env.db.Model(&models.OutboxEntry{}).Count(&outbox)
	if moved != 0 || outbox != 0 {
		t.Errorf("dry run moved %d domains and queued %d tasks", moved, outbox)
	}
}

func TestSetAutoRenewAppliesAtOnce(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	o := newOwner(t, env, "owner@example.com", 50)
	names := o.names(50)
	want := 0
	for _, d := range o.domains {
		if !d.AutoRenew {
			want++
		}
	}
	res, body := o.bulk("setAutoRenew", map[string]any{"domains": names, "payload": map[string]any{"auto_renew": true}, "options": map[string]any{"dry_run": true}})
	if res.StatusCode != 200 || body != fmt.Sprintf(`{"changed":%d,"count":50,"dryRun":true,"updated":false}`, want) {
		t.Errorf("dry run = %d %s", res.StatusCode, body)
	}
	res, body = o.bulk("setAutoRenew", map[string]any{"domains": names, "payload": map[string]any{"auto_renew": true}})
	if res.StatusCode != 200 || body != fmt.Sprintf(`{"changed":%d,"count":50,"dryRun":false,"updated":true}`, want) {
		t.Errorf("setAutoRenew = %d %s, want %d updated", res.StatusCode, body, want)
	}
	var off int64
	env.db.Model(&models.Domain{}).Where("user_id = ? AND NOT auto_renew", o.user.ID).Count(&off)
	if off != 0 {
		t.Errorf("%d domains still without auto-renew", off)
	}
	res, body = o.bulk("setAutoRenew", map[string]any{"domains": names, "payload": map[string]any{"auto_renew": true}})
	if body != `{"changed":0,"count":50,"dryRun":false,"updated":false}` {
		t.Errorf("repeat = %d %s, want all 50 covered, none changed", res.StatusCode, body)
	}
}

func TestRenewAndRestoreFillTheCart(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	o := newOwner(t, env, "owner@example.com", 400)
	var coms []string
	for _, d := range o.domains {
		if d.TLD == "com" && d.Status == models.DomainActive && len(coms) < 3 {
			coms = append(coms, d.Name)
		}
	}
	redemption := o.withStatus(models.DomainRedemption)
	if len(redemption) == 0 {
		t.Fatal("the demo portfolio has no domain in redemption")
	}
	type added struct {
		AddedToCart  bool     `json:"addedToCart"`
		CartItemIDs  []string `json:"cartItemIds"`
		TotalCents   int64    `json:"totalCents"`
		CheckoutPath string   `json:"checkoutPath"`
	}
	renewCents := *sandboxCents(t, env, "com", "renew")
	res, body := o.bulk("renew", map[string]any{"domains": coms, "payload": map[string]any{"years": 2}})
	var a added
	json.Unmarshal([]byte(body), &a)
	if res.StatusCode != 200 || !a.AddedToCart || len(a.CartItemIDs) != 3 || a.TotalCents != 3*2*renewCents || a.CheckoutPath == "" {
		t.Fatalf("renew = %d %s, want 3 items at %d cents", res.StatusCode, body, 2*renewCents)
	}
	// Renewing again reprices the same items rather than adding more.
	res, body = o.bulk("renew", map[string]any{"domains": coms, "payload": map[string]any{"years": 1}})
	var again added
	json.Unmarshal([]byte(body), &again)
	if strings.Join(again.CartItemIDs, ",") != strings.Join(a.CartItemIDs, ",") || again.TotalCents != 3*renewCents {
		t.Errorf("renew again = %s, want the same items at one year", body)
	}
	// Concurrent adds of the same domains meet in one item each.
	var wg sync.WaitGroup
	codes := make([]int, 6)
	for i := range codes {
		wg.Go(func() {
			res, _ := o.bulk("renew", map[string]any{"domains": coms, "payload": map[string]any{"years": 1}})
			codes[i] = res.StatusCode
		})
	}
	wg.Wait()
	var renewals int64
	env.db.Model(&models.CartItem{}).Where("op = ?", "renew").Count(&renewals)
	if slices.ContainsFunc(codes, func(c int) bool { return c != 200 }) || renewals != 3 {
		t.Errorf("concurrent renews = %v with %d items, want all 200 and 3 items", codes, renewals)
	}
	res, body = o.bulk("restore", map[string]any{"domains": redemption[:1]})
	var r added
	json.Unmarshal([]byte(body), &r)
	var d models.Domain
	env.db.First(&d, "name = ?", redemption[0])
	if res.StatusCode != 200 || len(r.CartItemIDs) != 1 || r.TotalCents != *sandboxCents(t, env, d.TLD, "restore") {
		t.Errorf("restore = %d %s", res.StatusCode, body)
	}

	type cart struct {
		Items      []cartItemView `json:"items"`
		Count      int            `json:"count"`
		TotalCents int64          `json:"totalCents"`
	}
	get := func() cart {
		_, body := o.json("GET", "/api/cart", "")
		var c cart
		json.Unmarshal([]byte(body), &c)
		return c
	}
	c := get()
	if c.Count != 4 || c.TotalCents != 3*renewCents+r.TotalCents {
		t.Errorf("cart = %+v", c)
	}
	if res, body := o.json("DELETE", "/api/cart/items/"+a.CartItemIDs[0], "", HeaderCSRFToken, o.csrf); res.StatusCode != 204 {
		t.Errorf("delete = %d %s", res.StatusCode, body)
	}
	if res, _ := o.json("DELETE", "/api/cart/items/"+a.CartItemIDs[0], "", HeaderCSRFToken, o.csrf); res.StatusCode != 404 {
		t.Errorf("second delete = %d, want 404", res.StatusCode)
	}
	if res, _ := o.json("DELETE", "/api/cart/items/42", "", HeaderCSRFToken, o.csrf); res.StatusCode != 400 {
		t.Errorf("delete of a malformed id = %d, want 400", res.StatusCode)
	}
	other := newOwner(t, env, "other@example.com", 0)
	if res, _ := other.json("DELETE", "/api/cart/items/"+a.CartItemIDs[1], "", HeaderCSRFToken, other.csrf); res.StatusCode != 404 {
		t.Errorf("another user's delete = %d, want 404", res.StatusCode)
	}
	if c := get(); c.Count != 3 {
		t.Errorf("cart after the delete has %d items, want 3", c.Count)
	}
}

func TestOverlappingBulkOpsKeepEachOthersChanges(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	o := newOwner(t, env, "owner@example.com", 150)
	startWorker(t, env, worker.Deps{Registry: sandbox.New(env.db, time.Millisecond)})
	names := o.names(150)
	var ids []string
	for _, req := range []struct {
		op   string
		body map[string]any
	}{
		{"lock", map[string]any{"domains": names}},
		{"setFolder", map[string]any{"domains": names, "payload": map[string]any{"folder": "together"}}},
		{"setNameservers", map[string]any{"domains": names, "payload": map[string]any{"nameservers": []string{"ns1.both.example", "ns2.both.example"}}}},
	} {
		res, body := o.bulk(req.op, req.body)
		var q struct{ BulkOpID string }
		if json.Unmarshal([]byte(body), &q); res.StatusCode != 200 {
			t.Fatalf("%s = %d %s", req.op, res.StatusCode, body)
		}
		ids = append(ids, q.BulkOpID)
	}
	for _, id := range ids {
		if st := o.waitTerminal(id); st.Status != models.BulkDone {
			t.Fatalf("op %s = %s %+v", id, st.Status, st.Counts)
		}
	}
	var all int64
	env.db.Model(&models.Domain{}).Where("user_id = ? AND locked AND folder = ? AND nameservers LIKE ?", o.user.ID, "together", "%ns1.both.example%").Count(&all)
	if all != 150 {
		t.Errorf("%d of 150 domains carry all three changes", all)
	}
}

// One naming style per body: the bulk-operation and cart bodies are
// camelCase, as the spec names their fields (bulkOpId, cartItemIds,
// totalCents, checkoutPath); only the spec's page block keeps its own.
func TestBulkBodiesUseOneNamingStyle(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	o := newOwner(t, env, "style@example.com", 5)
	names := o.names(2)
	_, queued := o.bulk("lock", map[string]any{"domains": names})
	var q struct{ BulkOpID string }
	json.Unmarshal([]byte(queued), &q)
	_, status := o.json("GET", "/api/domains/bulk/"+q.BulkOpID, "")
	_, renewed := o.bulk("renew", map[string]any{"domains": names})
	_, cart := o.json("GET", "/api/cart", "")
	_, autoRenew := o.bulk("setAutoRenew", map[string]any{"domains": names, "payload": map[string]any{"auto_renew": true}})
	for name, body := range map[string]string{"queued": queued, "status": status, "renew": renewed, "cart": cart, "setAutoRenew": autoRenew} {
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("%s: %v in %s", name, err, body)
		}
		if bad := snakeKeys(v, ""); len(bad) > 0 {
			t.Errorf("%s body has snake_case keys %v: %s", name, bad, body)
		}
	}
}

// snakeKeys lists the keys with an underscore in v, outside "page" blocks.
func snakeKeys(v any, at string) []string {
	var bad []string
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if k == "page" {
				continue
			}
			if strings.Contains(k, "_") {
				bad = append(bad, at+k)
			}
			bad = append(bad, snakeKeys(sub, at+k+".")...)
		}
	case []any:
		for _, sub := range v {
			bad = append(bad, snakeKeys(sub, at)...)
		}
	}
	return bad
}

// A bulk op refused because an earlier op is still changing its domains
// says to send it again once that op ends, so its refusal is not kept for
// its Idempotency-Key: the retry with the same key runs.
func TestBulkRefusedAsBusyIsNotKeptForItsKey(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	o := newOwner(t, env, "owner@example.com", 3)
	names := o.names(3)
	res, body := o.bulk("lock", map[string]any{"domains": names}) // no worker: it stays queued
	var lock struct{ BulkOpID string }
	if json.Unmarshal([]byte(body), &lock); res.StatusCode != 200 {
		t.Fatalf("lock = %d %s", res.StatusCode, body)
	}
	unlock := func() (*http.Response, string) {
		b, _ := json.Marshal(map[string]any{"domains": names[:1]})
		return o.json("POST", "/api/domains/bulk/unlock", string(b), HeaderCSRFToken, o.csrf, "Idempotency-Key", "unlock-once")
	}
	if res, body := unlock(); res.StatusCode != 409 || !strings.Contains(body, lock.BulkOpID) {
		t.Fatalf("unlock while the lock is queued = %d %s, want 409 naming %s", res.StatusCode, body, lock.BulkOpID)
	}
	env.db.Model(&models.BulkItem{}).Where("bulk_op_id = ?", lock.BulkOpID).Update("state", models.ItemDone)
	env.db.Model(&models.BulkOp{}).Where("id = ?", lock.BulkOpID).Update("state", models.BulkDone)
	res, body = unlock()
	if res.StatusCode != 200 || res.Header.Get("Idempotent-Replayed") != "" || !strings.Contains(body, "bulkOpId") {
		t.Errorf("the same key once the lock ended = %d (replayed %q) %s, want the unlock run", res.StatusCode, res.Header.Get("Idempotent-Replayed"), body)
	}
}
