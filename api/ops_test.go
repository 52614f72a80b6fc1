package api

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/dashboard"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// withDashboard rebuilds env's server with the writable queue dashboard
// mounted, as `domaind all` with DOMAIND_DASHBOARD_READ_ONLY=false.
func withDashboard(t *testing.T, env *testEnv) {
	t.Helper()
	d := dashboard.New(env.redis.Opt, false)
	t.Cleanup(func() { d.Close() })
	env.deps.Monitoring = d
	env.srv = New(env.deps)
}

// opsFrom sends an ops request with the right login from address, with
// extra header pairs.
func opsFrom(env *testEnv, method, path, body, address string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	r.SetBasicAuth("ops", "ops-secret")
	r.RemoteAddr = address + ":1234"
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	return env.do(r)
}

// A browser sends the Basic login it remembers with any site's form: an
// ops action must come from our own pages or from a program.
func TestOpsActionsRefuseOtherSites(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	withDashboard(t, env)
	inspector := asynq.NewInspectorFromRedisClient(env.redis.Client)
	if _, err := asynq.NewClientFromRedisClient(env.redis.Client).Enqueue(asynq.NewTask("test:x", nil), asynq.Queue("tools")); err != nil {
		t.Fatal(err)
	}
	for _, cross := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
		{"Origin", "https://evil.example"},
		{"Origin", "http://api.test.evil.example"},
	} {
		w := opsFrom(env, "POST", "/monitoring/api/queues/tools:pause", "", "192.0.2.1", cross...)
		wantError(t, fmt.Sprintf("dashboard pause with %v", cross), w, 403, "forbidden")
		w = opsFrom(env, "POST", "/api/ops/canaries", `{}`, "192.0.2.1", cross...)
		wantError(t, fmt.Sprintf("canary with %v", cross), w, 403, "forbidden")
	}
	if q, err := inspector.GetQueueInfo("tools"); err != nil || q.Paused {
		t.Fatalf("queue after the cross-site posts = %+v, %v; want not paused", q, err)
	}
	var n int64
	env.db.Model(&models.Canary{}).Count(&n)
	if n != 0 {
		t.Errorf("%d canaries made by cross-site posts", n)
	}
	for _, same := range [][]string{nil, {"Sec-Fetch-Site", "same-origin"}, {"Origin", "http://api.test"}} {
		if w := opsFrom(env, "GET", "/monitoring/api/queues", "", "192.0.2.1", same...); w.Code != 200 {
			t.Errorf("dashboard read with %v = %d", same, w.Code)
		}
	}
	if w := opsFrom(env, "GET", "/monitoring/api/queues", "", "192.0.2.1", "Sec-Fetch-Site", "cross-site"); w.Code != 200 {
		t.Errorf("a cross-site read (a link followed) = %d, want 200: reading changes nothing", w.Code)
	}
	if w := opsFrom(env, "POST", "/monitoring/api/queues/tools:pause", "", "192.0.2.1", "Sec-Fetch-Site", "same-origin"); w.Code >= 300 {
		t.Errorf("pause from the dashboard's own page = %d %s", w.Code, w.Body)
	}
	if w := opsFrom(env, "POST", "/api/ops/canaries", `{}`, "192.0.2.1"); w.Code != 202 && w.Code != 201 {
		t.Errorf("canary from a program (no browser headers) = %d %s", w.Code, w.Body)
	}
}

// Wrong ops logins are counted per address, each before it is checked,
// and past the limit the address is refused unchecked.
func TestOpsLoginFailuresAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	withDashboard(t, env)
	wrong := func(address string) int {
		r := httptest.NewRequest("GET", "/monitoring/api/queues", nil)
		r.SetBasicAuth("ops", "guess")
		r.RemoteAddr = address + ":1234"
		return env.do(r).Code
	}
	codes := make(chan int, 2*opsFailureLimit.Limit)
	for range cap(codes) {
		go func() { codes <- wrong("198.51.100.7") }()
	}
	count := map[int]int{}
	for range cap(codes) {
		count[<-codes]++
	}
	if count[401] != opsFailureLimit.Limit || count[429] != opsFailureLimit.Limit {
		t.Errorf("%d parallel wrong logins answered %v, want %d × 401 and the rest 429", cap(codes), count, opsFailureLimit.Limit)
	}
	if w := opsFrom(env, "GET", "/monitoring/api/queues", "", "198.51.100.7"); w.Code != 429 {
		t.Errorf("the right login from the guessing address = %d, want 429 until the window passes", w.Code)
	}
	if w := opsFrom(env, "GET", "/monitoring/api/queues", "", "198.51.100.8"); w.Code != 200 {
		t.Errorf("the right login from another address = %d, want 200", w.Code)
	}
	for range 2 * opsFailureLimit.Limit { // right logins cost nothing
		if w := opsFrom(env, "GET", "/api/ops/canaries/none", "", "198.51.100.9"); w.Code == 429 {
			t.Fatal("right logins were counted as failures")
		}
	}
}

// A dashboard sends its requests many at once, each with the login: once
// its address has signed in they are not counted as failures, where each
// took a unit until it was checked and a dozen at once were refused.
func TestOpsRequestsAtOnceAreNotTakenForGuesses(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	const address = "198.51.100.20"
	if w := opsFrom(env, "GET", "/api/ops/canaries/none", "", address); w.Code != 404 {
		t.Fatalf("the first request = %d %s, want the route's 404", w.Code, w.Body)
	}
	codes := make(chan int, 4*opsFailureLimit.Limit)
	for range cap(codes) {
		go func() { codes <- opsFrom(env, "GET", "/api/ops/canaries/none", "", address).Code }()
	}
	count := map[int]int{}
	for range cap(codes) {
		count[<-codes]++
	}
	if count[404] != cap(codes) {
		t.Errorf("%d requests at once with the right login answered %v, want the route's 404 each", cap(codes), count)
	}
}

func TestOpsBodiesMustSayJSON(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded"} {
		r := httptest.NewRequest("POST", "/api/ops/canaries", strings.NewReader(`{"steps":2}`))
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		r.SetBasicAuth("ops", "ops-secret")
		wantError(t, "canary sent as "+fmt.Sprintf("%q", ct), env.do(r), 400, "bad_request")
	}
	r := httptest.NewRequest("POST", "/api/ops/canaries", strings.NewReader(`{"steps":2}`))
	r.Header.Set("Content-Type", "Application/JSON; charset=UTF-8")
	r.SetBasicAuth("ops", "ops-secret")
	if w := env.do(r); w.Code >= 300 {
		t.Errorf("canary sent as Application/JSON; charset=UTF-8 = %d %s, want accepted (media types compare without case)", w.Code, w.Body)
	}
}

// The queue dashboard runs in a real browser under its
// Content-Security-Policy: asynqmon's app boots and shows the queues.
func TestBrowserDashboardUnderItsPolicy(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := opsChromium(t)
	withDashboard(t, env)
	srv.Config.Handler = env.checkedHandler()
	err := chromedp.Do(ctx, chromedp.Steps(
		chromedp.Navigate(srv.URL+"/monitoring/"),
		chromedp.WaitVisible(chromedp.CSS("#root header")), // rendered by the app's scripts
	))
	if err != nil {
		t.Fatalf("the dashboard: %v", err)
	}
	queues, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#root")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(queues, "Queues") {
		t.Errorf("the dashboard shows %q, want its queues", queues)
	}
}

// The ops index links every ops page and shows each queue's health from
// asynq: a task waiting shows as pending, an archived one as archived.
func TestOpsIndexShowsTheQueues(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	client := asynq.NewClientFromRedisClient(env.redis.Client)
	if _, err := client.Enqueue(asynq.NewTask("canary:run", []byte(`{}`)), asynq.Queue("maintenance")); err != nil {
		t.Fatal(err)
	}
	info, err := client.Enqueue(asynq.NewTask("lookup:run", []byte(`{}`)), asynq.Queue("rdap"))
	if err != nil {
		t.Fatal(err)
	}
	if err := asynq.NewInspectorFromRedisClient(env.redis.Client).ArchiveTask("rdap", info.ID); err != nil {
		t.Fatal(err)
	}
	if w := env.request("GET", "/ops", ""); w.Code != 401 {
		t.Errorf("the ops index without the ops login = %d, want 401", w.Code)
	}
	w := opsRequest(env, "GET", "/ops", "")
	page := w.Body.String()
	if w.Code != 200 {
		t.Fatalf("GET /ops = %d %s", w.Code, page)
	}
	for _, link := range []string{"/ops/partners", "/ops/orders", "/ops/settlements", "/ops/brokerage", "/ops/payments", "/ops/payouts"} {
		if !strings.Contains(page, `href="`+link+`"`) {
			t.Errorf("the ops index does not link %s", link)
		}
	}
	pending := regexp.MustCompile(`id="queue-maintenance">\s*<td data-label="Queue">maintenance</td>\s*<td class="pending" data-label="Pending">1</td>`)
	archived := regexp.MustCompile(`id="queue-rdap">[\s\S]*?<td class="archived" data-label="Archived">1</td>`)
	if !pending.MatchString(page) || !archived.MatchString(page) {
		t.Errorf("the queues table does not show one pending maintenance task and one archived rdap task:\n%s", page)
	}
	// A queue that has had no task yet is shown too, empty.
	for q := range tasks.QueueWeights {
		empty := regexp.MustCompile(`id="queue-` + q + `">\s*<td data-label="Queue">` + q + `</td>`)
		if !empty.MatchString(page) {
			t.Errorf("the queues table has no row of the %s queue", q)
		}
	}
}

// The ops index lists the work waiting for ops with each one's move; its
// paid-by-hand forms answer as the API does, and the work paid leaves it.
func TestOpsIndexShowsTheBacklog(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	index := func() string {
		t.Helper()
		w := opsRequest(env, "GET", "/ops", "")
		if w.Code != 200 {
			t.Fatalf("GET /ops = %d %s", w.Code, w.Body)
		}
		return w.Body.String()
	}
	if page := index(); !strings.Contains(page, "Nothing is waiting for ops.") {
		t.Errorf("an empty backlog is not said:\n%s", page)
	}
	seedBacklog(t, env)
	page := index()
	for _, want := range []string{
		`<tr id="backlog-rf_owed" class="card_refund_failed">`, `<form method="post" action="/ops/refunds/rf_owed/paid-by-hand"`, "100.00 USD", "card expired",
		`<tr id="backlog-pay_lost" class="return_given_up">`, `<form method="post" action="/ops/payments/pay_lost/paid-by-hand"`, "70.00 USD",
		`<form method="post" action="/ops/refunds/rf_owed/retry"`,
		"The processor counts 100.00 USD refunded on this charge beyond the refunds sent",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the backlog lacks %q:\n%s", want, page)
		}
	}
	w := opsForm(env, "/ops/refunds/rf_owed/paid-by-hand", url.Values{"reference": {""}})
	if w.Code != 400 || !strings.Contains(w.Body.String(), "reference") || !strings.Contains(w.Body.String(), `id="backlog-rf_owed"`) {
		t.Errorf("no reference = %d:\n%s", w.Code, w.Body)
	}
	if strings.Count(page, "The processor counts") != 1 || strings.Count(page, "retry the card refund</button>") != 1 {
		t.Errorf("the warning and the retry are not on the failed card refund's row alone:\n%s", page)
	}
	w = opsForm(env, "/ops/refunds/rf_owed/paid-by-hand", url.Values{"reference": {"wire-7"}})
	if w.Code != 303 || w.Header().Get("Location") != "/ops" {
		t.Fatalf("paid by hand = %d %s", w.Code, w.Body)
	}
	after := afterForm(env, w).Body.String()
	if !strings.Contains(after, "refund rf_owed of ord_owed (owed.com) recorded as paid back by hand, reference wire-7") || strings.Contains(after, `id="backlog-rf_owed"`) ||
		!strings.Contains(after, `id="backlog-pay_lost"`) {
		t.Errorf("after the refund was paid by hand the index shows:\n%s", after)
	}
}

// In a real browser, ops start at /ops: the work waiting for them and the
// queues are there, a failed card refund is recorded paid by hand from
// its row, and the links lead on to the pages.
func TestBrowserOpsIndex(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := opsChromium(t)
	if _, err := asynq.NewClientFromRedisClient(env.redis.Client).Enqueue(asynq.NewTask("canary:run", []byte(`{}`)), asynq.Queue("maintenance")); err != nil {
		t.Fatal(err)
	}
	seedBacklog(t, env)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/ops"), chromedp.WaitVisible(chromedp.CSS("#queue-maintenance"))); err != nil {
		t.Fatalf("the ops index: %v", err)
	}
	checkPage(t, ctx, "ops")
	row := "#backlog-rf_owed"
	pay := chromedp.Steps(
		chromedp.SendKeys(chromedp.CSS(row+` input[name="reference"]`), "wire-2026-11-30"),
		chromedp.Click(chromedp.CSS(row+` form[action$="/paid-by-hand"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)),
	)
	if err := chromedp.Do(ctx, pay); err != nil {
		t.Fatalf("paid by hand from the index: %v", err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#backlog tbody tr")).map(r => r.id)`))
	if err != nil {
		t.Fatal(err)
	}
	notice, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`p.notice`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(notice, "refund rf_owed of ord_owed (owed.com) recorded as paid back by hand") || len(rows) != 1 || rows[0] != "backlog-pay_lost" {
		t.Errorf("after paying by hand the index says %q, with rows %q left", notice, rows)
	}
	var rf models.Refund
	env.db.Take(&rf, "id = ?", "rf_owed")
	if rf.PaidByHandReference != "wire-2026-11-30" {
		t.Errorf("the refund keeps reference %q", rf.PaidByHandReference)
	}
	pending, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#queue-maintenance .pending")))
	if err != nil {
		t.Fatal(err)
	}
	if pending != "1" {
		t.Errorf("maintenance pending %q, want 1", pending)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`ul a[href="/ops/orders"]`)), chromedp.WaitVisible(chromedp.CSS("#orders"))); err != nil {
		t.Fatalf("on to the orders page: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`header a[href="/ops/payments"]`)), chromedp.WaitVisible(chromedp.CSS("#payments"))); err != nil {
		t.Fatalf("on to the payments page: %v", err)
	}
	checkPage(t, ctx, "ops-payments")
}
