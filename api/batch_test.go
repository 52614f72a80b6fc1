package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/go-cmp/cmp"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/config"
)

type batchReply struct {
	Results []struct {
		ID       string          `json:"id"`
		Op       *string         `json:"op"`
		Status   int             `json:"status"`
		Body     json.RawMessage `json:"body"`
		Replayed bool            `json:"replayed"`
	} `json:"results"`
	Count  int `json:"count"`
	Failed int `json:"failed"`
}

func runBatch(t *testing.T, env *testEnv, body string, header ...string) batchReply {
	t.Helper()
	w := env.request("POST", "/api/batch", body, header...)
	if w.Code != 200 {
		t.Fatalf("batch = %d %s", w.Code, w.Body)
	}
	var r batchReply
	if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestBatchAnswersLikeTheSingleCalls(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	r := runBatch(t, env, `{"operations":[
		{"id":"p","op":"tld_registration_price","params":{"tld":"com","op":"register"}},
		{"op":"tld_requirements","params":{"tld":"io"}},
		{"id":7,"op":"search_domain","params":{"q":"google.com"}},
		{"op":"tld_registration_price","params":{"op":"register"}},
		{"op":"tld_requirements","params":{"tld":"notsoldhere"}},
		{"op":"search_domain","params":{"q":42}},
		{"op":"tld_requirements","params":{"tld":"../../healthz"}}
	]}`)
	if r.Count != 7 || len(r.Results) != 7 {
		t.Fatalf("count = %d, %d results", r.Count, len(r.Results))
	}
	direct := []struct {
		method, path, body string
	}{
		{"GET", "/api/pricing/tld?tld=com&op=register", ""},
		{"GET", "/api/tlds/io/metadata", ""},
		{"", "", ""}, // the search: compared below
		{"GET", "/api/pricing/tld?op=register", ""},
		{"GET", "/api/tlds/notsoldhere/metadata", ""},
		{"POST", "/api/domain/search", `{"q":42}`},
		{"GET", "/api/tlds/..%2F..%2Fhealthz/metadata", ""}, // routed like the direct call: no route
	}
	wantIDs := []string{"p", "1", "7", "3", "4", "5", "6"}
	wantStatus := []int{200, 200, 200, 400, 404, 400, 404}
	for i, res := range r.Results {
		if res.ID != wantIDs[i] || res.Status != wantStatus[i] || res.Op == nil {
			t.Errorf("result %d = id %q status %d op %v, want id %q status %d", i, res.ID, res.Status, res.Op, wantIDs[i], wantStatus[i])
		}
		if d := direct[i]; d.method != "" {
			w := env.request(d.method, d.path, d.body)
			if w.Code != res.Status || strings.TrimSpace(w.Body.String()) != string(res.Body) {
				t.Errorf("result %d = %d %s, direct call = %d %s", i, res.Status, res.Body, w.Code, w.Body)
			}
		}
	}
	if r.Failed != 4 {
		t.Errorf("failed = %d, want 4", r.Failed)
	}
	var events []map[string]any
	if err := json.Unmarshal(r.Results[2].Body, &events); err != nil {
		t.Fatalf("search body %s is not an array of events: %v", r.Results[2].Body, err)
	}
	if len(events) != 12+3 || events[0]["kind"] != "header" || events[len(events)-1]["kind"] != "done" {
		t.Errorf("search events = %v", events)
	}
}

// An operation whose path segment is missing has no call to stand for: it
// is the batch's 400 naming the parameter, not a route that is not there.
func TestBatchRequiresAPathsParameter(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	r := runBatch(t, env, `{"operations":[
		{"op":"tld_requirements","params":{}},
		{"op":"tld_requirements"},
		{"op":"tld_requirements","params":{"tld":null}},
		{"op":"tld_requirements","params":{"tld":" "}}
	]}`)
	for i, res := range r.Results {
		if res.Status != 400 || !strings.Contains(string(res.Body), `"validation_error"`) || !strings.Contains(string(res.Body), "params.tld is required") {
			t.Errorf("result %d = %d %s, want 400 saying params.tld is required", i, res.Status, res.Body)
		}
	}
}

func TestBatchCountsEachOperationAgainstItsLimit(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	var ops []string
	for range 20 {
		ops = append(ops, `{"op":"tld_registration_price","params":{"tld":"com"}}`)
	}
	body := `{"operations":[` + strings.Join(ops, ",") + `]}`
	for i := range 6 { // 120 pricing calls spend the 120/min limit
		if r := runBatch(t, env, body); r.Failed != 0 {
			t.Fatalf("batch %d: %d failed", i, r.Failed)
		}
	}
	r := runBatch(t, env, body)
	if r.Failed != 20 || r.Results[0].Status != 429 {
		t.Fatalf("after 120 calls: failed %d, first status %d", r.Failed, r.Results[0].Status)
	}
	if w := env.request("GET", "/api/pricing/tld?tld=com", ""); w.Code != 429 {
		t.Errorf("direct call after the batches = %d, want 429", w.Code)
	}
}

// A batch operation's inner request is compared with the direct call a
// client would send: the tld as an escaped path segment, params as query
// values. Status and body must be the same, whatever the tld holds.
func TestBatchHostileParamsAnswerLikeTheDirectCall(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	tests := []struct {
		name, op, params, direct string
	}{
		{"tld with a space", "tld_requirements", `{"tld":"c om"}`, "/api/tlds/c%20om/metadata"},
		{"tld percent", "tld_requirements", `{"tld":"%"}`, "/api/tlds/%25/metadata"},
		{"tld escaped slash", "tld_requirements", `{"tld":"%2F"}`, "/api/tlds/%252F/metadata"},
		{"tld escaped known tld", "tld_requirements", `{"tld":"%63om"}`, "/api/tlds/%2563om/metadata"},
		{"tld slash", "tld_requirements", `{"tld":"com/"}`, "/api/tlds/com%2F/metadata"},
		{"tld dot dot", "tld_requirements", `{"tld":".."}`, "/api/tlds/../metadata"},
		{"tld climbs out", "tld_requirements", `{"tld":"../../healthz"}`, "/api/tlds/..%2F..%2Fhealthz/metadata"},
		{"tld unicode", "tld_requirements", `{"tld":"ком"}`, "/api/tlds/%D0%BA%D0%BE%D0%BC/metadata"},
		{"tld idn of a sold tld", "tld_requirements", `{"tld":"ＣＯＭ"}`, "/api/tlds/%EF%BC%A3%EF%BC%AF%EF%BC%AD/metadata"},
		{"tld query and fragment", "tld_requirements", `{"tld":"com?x=1#y"}`, "/api/tlds/com%3Fx=1%23y/metadata"},
		{"tld a number", "tld_requirements", `{"tld":42}`, "/api/tlds/42/metadata"},
		{"price tld with a space", "tld_registration_price", `{"tld":"c om"}`, "/api/pricing/tld?tld=c+om"},
		{"price tld percent", "tld_registration_price", `{"tld":"%2F","op":"register"}`, "/api/pricing/tld?op=register&tld=%252F"},
		{"price tld smuggles op", "tld_registration_price", `{"tld":"com&op=restore"}`, "/api/pricing/tld?tld=com%26op%3Drestore"},
		{"price tld unicode", "tld_registration_price", `{"tld":"ком","op":"register"}`, "/api/pricing/tld?op=register&tld=%D0%BA%D0%BE%D0%BC"},
		{"price tld empty", "tld_registration_price", `{"tld":""}`, "/api/pricing/tld?tld="},
		{"price tld path trick", "tld_registration_price", `{"tld":"../../healthz"}`, "/api/pricing/tld?tld=..%2F..%2Fhealthz"},
	}
	var ops []string
	for _, tc := range tests {
		ops = append(ops, fmt.Sprintf(`{"op":%q,"params":%s}`, tc.op, tc.params))
	}
	r := runBatch(t, env, `{"operations":[`+strings.Join(ops, ",")+`]}`)
	if len(r.Results) != len(tests) {
		t.Fatalf("%d results for %d operations", len(r.Results), len(tests))
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := r.Results[i]
			w := env.request("GET", tc.direct, "")
			if got.Status != w.Code || string(got.Body) != strings.TrimSpace(w.Body.String()) {
				t.Errorf("batch = %d %s, direct GET %s = %d %s", got.Status, got.Body, tc.direct, w.Code, w.Body)
			}
		})
	}
}

// probeRequest is what the probe route saw of a request.
type probeRequest struct {
	Method        string      `json:"method"`
	Host          string      `json:"host"`
	RequestURI    string      `json:"request_uri"`
	Path          string      `json:"path"`
	RawPath       string      `json:"raw_path"`
	RawQuery      string      `json:"raw_query"`
	RemoteAddr    string      `json:"remote_addr"`
	Client        string      `json:"client"`
	Header        http.Header `json:"header"`
	Cookies       int         `json:"cookies"`
	TLS           bool        `json:"tls"`
	ContentLength int64       `json:"content_length"`
}

// The batch's credentials do not reach its operations: the inner request
// a probe route receives is the direct anonymous call, header for header,
// and a path trick onto the ops routes is refused as for an anonymous call
// although the batch request carries the ops credentials.
func TestBatchReachesNothingMoreThanAnAnonymousCall(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(c *config.Config) { c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")} })
	seedTLDs(t, env)
	env.srv.engine.GET("/test/probe/metadata", func(c *gin.Context) {
		r := c.Request
		c.JSON(200, probeRequest{
			Method: r.Method, Host: r.Host, RequestURI: r.RequestURI, Path: r.URL.Path, RawPath: r.URL.RawPath,
			RawQuery: r.URL.RawQuery, RemoteAddr: r.RemoteAddr, Client: httpjson.Client(c), Header: r.Header,
			Cookies: len(r.Cookies()), TLS: r.TLS != nil, ContentLength: r.ContentLength,
		})
	})
	// From behind a trusted proxy that appended its own X-Forwarded-For line
	// to the client's (spoofed) one: the client is the proxy's entry.
	request := func(method, target, body string, credentials bool) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.RemoteAddr = "10.1.2.3:4567"
		r.Header.Add("X-Forwarded-For", "203.0.113.66")
		r.Header.Add("X-Forwarded-For", "198.51.100.7")
		r.Header.Set(HeaderRequestID, "batch-request-1")
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		if credentials {
			r.SetBasicAuth("ops", "ops-secret")
			r.Header.Set("Proxy-Authorization", "Basic b3BzOm9wcy1zZWNyZXQ=")
			r.Header.Set("Cookie", "session=secret-session; oauth=secret-token")
			r.Header.Set("X-Api-Key", "secret-key")
			r.Header.Set("X-Api-Secret", "secret-secret")
			r.Header.Set("Idempotency-Key", "secret-idem")
		}
		return env.do(r)
	}
	opsTrick := "/api/tlds/..%2Fops%2Fcanaries%2Fx%2F../metadata" // cleaned by the router to /api/ops/canaries/metadata
	probe := "/api/tlds/..%2F..%2Ftest%2Fprobe/metadata"          // cleaned to /test/probe/metadata
	// The direct calls show the trick reaches the ops route, and that the
	// credentials would open it.
	if w := request("GET", opsTrick, "", true); w.Code != 404 {
		t.Fatalf("direct call with ops credentials = %d %s; want 404 from the canary lookup, past the ops check", w.Code, w.Body)
	}
	anonymousOps := request("GET", opsTrick, "", false)
	if anonymousOps.Code != 401 {
		t.Fatalf("direct anonymous call = %d %s, want 401", anonymousOps.Code, anonymousOps.Body)
	}
	anonymousProbe := request("GET", probe, "", false)
	if anonymousProbe.Code != 200 {
		t.Fatalf("direct call to the probe = %d %s", anonymousProbe.Code, anonymousProbe.Body)
	}
	var want probeRequest
	if err := json.Unmarshal(anonymousProbe.Body.Bytes(), &want); err != nil {
		t.Fatal(err)
	}
	if want.Client != "198.51.100.7" || len(want.Header["X-Forwarded-For"]) != 2 {
		t.Fatalf("direct probe = %+v; want client 198.51.100.7 from two X-Forwarded-For lines", want)
	}

	w := request("POST", "/api/batch", `{"operations":[
		{"op":"tld_requirements","params":{"tld":"../ops/canaries/x/.."}},
		{"op":"tld_requirements","params":{"tld":"../../test/probe"}}
	]}`, true)
	if w.Code != 200 {
		t.Fatalf("batch = %d %s", w.Code, w.Body)
	}
	var r batchReply
	if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil || len(r.Results) != 2 {
		t.Fatalf("batch body %s: %v", w.Body, err)
	}
	if ops := r.Results[0]; ops.Status != 401 || string(ops.Body) != strings.TrimSpace(anonymousOps.Body.String()) {
		t.Errorf("ops path trick = %d %s; want the anonymous 401 %s", ops.Status, ops.Body, anonymousOps.Body)
	}
	if p := r.Results[1]; p.Status != 200 {
		t.Fatalf("probe through the batch = %d %s", p.Status, p.Body)
	}
	var got probeRequest
	if err := json.Unmarshal(r.Results[1].Body, &got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("inner request differs from the direct anonymous call (-want +got):\n%s", d)
	}
	for _, secret := range []string{"b3BzOm9wcy1zZWNyZXQ", "secret-"} {
		if bytes.Contains(r.Results[1].Body, []byte(secret)) {
			t.Errorf("inner request carries %q: %s", secret, r.Results[1].Body)
		}
	}
}

// The batch's Idempotency-Key covers the batch: its operations do not share
// it (two searches with one key would collide), and a retry replays the batch.
func TestBatchIdempotencyKeyCoversTheBatch(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	body := `{"operations":[
		{"op":"search_domain","params":{"q":"example.com"}},
		{"op":"search_domain","params":{"q":"example.org"}}
	]}`
	first := env.request("POST", "/api/batch", body, "Idempotency-Key", "batch-key-1")
	var r batchReply
	if err := json.Unmarshal(first.Body.Bytes(), &r); err != nil || first.Code != 200 {
		t.Fatalf("batch = %d %s", first.Code, first.Body)
	}
	for i, res := range r.Results {
		if res.Status != 200 {
			t.Errorf("search %d = %d %s; want 200 (the key is the batch's, not the operations')", i, res.Status, res.Body)
		}
	}
	replay := env.request("POST", "/api/batch", body, "Idempotency-Key", "batch-key-1")
	if replay.Code != 200 || replay.Header().Get(HeaderIdempotentReplayed) != "true" || replay.Body.String() != first.Body.String() {
		t.Errorf("retry = %d replayed %q; want the first batch's answer", replay.Code, replay.Header().Get(HeaderIdempotentReplayed))
	}
	// Kept whole, the batch keeps none of its operations' answers besides.
	if keys := env.redis.Keys(t, "idem:addr:*"); len(keys) != 1 {
		t.Errorf("records kept = %v, want the batch's only", keys)
	}
}

// retriedBatch is a search, a price, a TLD's rules and a WHOIS lookup.
const retriedBatch = `{"operations":[
	{"id":"search","op":"search_domain","params":{"q":"example.com"}},
	{"id":"price","op":"tld_registration_price","params":{"tld":"com","op":"register"}},
	{"id":"rules","op":"tld_requirements","params":{"tld":"io"}},
	{"id":"whois","op":"whois_lookup","params":{"domain":"google.com"}}
]}`

// batchAcrossMidnight sends retriedBatch with header twenty seconds before
// midnight, when the day's WHOIS quota is spent (its lookup is refused,
// 429, and the batch says "retry later"), then retryBody with header ten
// seconds after midnight, when the quota is back and the units the first
// batch spent are still in their minute. Both come from testClient.
func batchAcrossMidnight(t testing.TB, retryBody string, header ...string) (env *testEnv, first, retry *httptest.ResponseRecorder) {
	t.Helper()
	env = newTestEnv(t)
	seedTLDs(t, env)
	startLookupWorker(t, env, newLookupWorld(t).resolver)
	env.now = time.Date(2026, 11, 22, 23, 59, 40, 0, time.UTC)
	for range whoisQuota.Limit {
		if r, err := env.srv.svc.Limiter.Allow(context.Background(), whoisQuota, testClient); err != nil || !r.Allowed {
			t.Fatalf("spending the WHOIS quota: %+v, %v", r, err)
		}
	}
	first = env.request("POST", "/api/batch", retriedBatch, header...)
	if got := batchStatuses(t, first); got != "200 200 200 429" {
		t.Fatalf("first batch statuses = %s, want 200 200 200 429: %s", got, first.Body)
	}
	env.now = env.now.Add(30 * time.Second)
	retry = env.request("POST", "/api/batch", retryBody, header...)
	if got := batchStatuses(t, retry); got != "200 200 200 201" {
		t.Fatalf("retry statuses = %s, want 200 200 200 201: %s", got, retry.Body)
	}
	return env, first, retry
}

// testClient is the address of env.request's requests, as limits key it.
const testClient = "192.0.2.1"

// batchStatuses is a batch answer's results' statuses, space-separated.
func batchStatuses(t testing.TB, w *httptest.ResponseRecorder) string {
	t.Helper()
	r := decodeBatch(t, w)
	var s []string
	for _, res := range r.Results {
		s = append(s, strconv.Itoa(res.Status))
	}
	return strings.Join(s, " ")
}

func decodeBatch(t testing.TB, w *httptest.ResponseRecorder) batchReply {
	t.Helper()
	var r batchReply
	if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil || w.Code != 200 {
		t.Fatalf("batch = %d %s (%v)", w.Code, w.Body, err)
	}
	return r
}

// unitsLeft is what the search and pricing limits have left for
// testClient: the search's from the limiter, spending nothing; the
// pricing's from a direct call (its units are leased by the process, which
// only a call sees), which spends one.
func unitsLeft(t testing.TB, env *testEnv) (search int, pricing string) {
	t.Helper()
	r, err := env.srv.svc.Limiter.Status(context.Background(), searchLimit, testClient)
	if err != nil {
		t.Fatal(err)
	}
	w := env.request("GET", "/api/tlds/com/metadata", "")
	if w.Code != 200 {
		t.Fatalf("direct metadata call = %d %s", w.Code, w.Body)
	}
	return r.Remaining, exactHeader(w, "RateLimit-Remaining")
}

// A batch holding an operation refused for now is not kept under its
// Idempotency-Key, so its retry runs; but the operations that succeeded
// are kept, and the retry replays them, spending none of their units
// again, and runs only the refused one. The search's stream, kept as the
// array of its events, is replayed as it was first answered.
func TestBatchRetryReplaysTheOperationsThatSucceeded(t *testing.T) {
	t.Parallel()
	env, first, retry := batchAcrossMidnight(t, retriedBatch, "Idempotency-Key", "retried-batch")
	if got := retry.Header().Get(HeaderIdempotentReplayed); got != "" {
		t.Errorf("retry Idempotent-Replayed = %q; want the batch run again (its first answer said retry later)", got)
	}
	was, now := decodeBatch(t, first), decodeBatch(t, retry)
	for i, id := range []string{"search", "price", "rules"} {
		if now.Results[i].ID != id || string(now.Results[i].Body) != string(was.Results[i].Body) || !now.Results[i].Replayed || was.Results[i].Replayed {
			t.Errorf("retried %s ran again, or is not marked replayed (%t, first %t):\n got %.160s…\nwant %.160s…", id,
				now.Results[i].Replayed, was.Results[i].Replayed, now.Results[i].Body, was.Results[i].Body)
		}
	}
	if now.Results[3].Replayed {
		t.Errorf("the retried whois, which ran again, is marked replayed")
	}
	var events []map[string]any
	if err := json.Unmarshal(now.Results[0].Body, &events); err != nil || len(events) < 3 || events[0]["kind"] != "header" || events[len(events)-1]["kind"] != "done" {
		t.Errorf("replayed search body = %s, want the array of its events (%v)", now.Results[0].Body, err)
	}
	var whois whoisReply
	if err := json.Unmarshal(now.Results[3].Body, &whois); err != nil || whois.Lookup.Domain != "google.com" || whois.Used != 1 {
		t.Errorf("retried whois = %s, want today's first lookup (%v)", now.Results[3].Body, err)
	}
	// One search and two pricing units spent, by the first batch; the
	// direct call is the third pricing unit.
	if search, pricing := unitsLeft(t, env); search != 59 || pricing != "117" {
		t.Errorf("units left: search %d, pricing %s; want 59 and 117 (the retry spent none)", search, pricing)
	}

	// Kept: the batch, answered in full, alone; the answers the first send
	// kept for its operations are in it, and are let go (kept twice, they
	// would count twice against the address's budget).
	if keys := env.redis.Keys(t, "idem:addr:*"); len(keys) != 1 {
		t.Errorf("records kept = %v, want the batch's one", keys)
	}
	// Answered in full, the batch is now kept whole.
	again := env.request("POST", "/api/batch", retriedBatch, "Idempotency-Key", "retried-batch")
	if again.Code != 200 || again.Header().Get(HeaderIdempotentReplayed) != "true" || again.Body.String() != retry.Body.String() {
		t.Errorf("third send = %d replayed %q %s; want the retry's answer replayed", again.Code, again.Header().Get(HeaderIdempotentReplayed), again.Body)
	}
	other := env.request("POST", "/api/batch", `{"operations":[{"op":"tld_requirements","params":{"tld":"com"}}]}`, "Idempotency-Key", "retried-batch")
	wantError(t, "another body with the key", other, 409, "conflict")
}

// A retry that is not the same request, without a key or with the key and
// another body, runs every operation again and spends its units again.
func TestBatchRetryRunsEveryOperationUnlessTheSameRequest(t *testing.T) {
	t.Parallel()
	relabelled := strings.Replace(retriedBatch, `"id":"search"`, `"id":"search-again"`, 1)
	tests := []struct {
		name      string
		retryBody string
		header    []string
	}{
		{"without a key", retriedBatch, nil},
		{"with the key and another body", relabelled, []string{"Idempotency-Key", "retried-batch"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, first, retry := batchAcrossMidnight(t, tc.retryBody, tc.header...)
			was, now := decodeBatch(t, first), decodeBatch(t, retry)
			if string(now.Results[0].Body) == string(was.Results[0].Body) {
				t.Errorf("retried search = %s, want a new stream (a new request id)", now.Results[0].Body)
			}
			if search, pricing := unitsLeft(t, env); search != 58 || pricing != "115" {
				t.Errorf("units left: search %d, pricing %s; want 58 and 115 (both batches spent)", search, pricing)
			}
		})
	}
}

// A caller over the batch limit (60 batches a minute per IP) gets 429 for
// the whole batch, and none of its operations runs.
func TestBatchOverItsOwnLimitIs429(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	body := `{"operations":[{"op":"tld_requirements","params":{"tld":"com"}}]}`
	for i := 1; i <= 60; i++ {
		w := env.request("POST", "/api/batch", body)
		if w.Code != 200 {
			t.Fatalf("batch %d = %d %s, want 200", i, w.Code, w.Body)
		}
		if got := exactHeader(w, "RateLimit-Remaining"); got != strconv.Itoa(60-i) {
			t.Fatalf("batch %d: RateLimit-Remaining = %q, want %d", i, got, 60-i)
		}
	}
	w := env.request("POST", "/api/batch", body)
	if w.Code != 429 {
		t.Fatalf("61st batch = %d %s, want 429", w.Code, w.Body)
	}
	if code, _ := typedError(t, w); code != "rate_limited" {
		t.Errorf("code = %q, want rate_limited", code)
	}
	if ra, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Errorf("Retry-After = %q, want 1 to 60 seconds", w.Header().Get("Retry-After"))
	}
	if got := exactHeader(w, "RateLimit-Policy"); got != "60;w=60" {
		t.Errorf("RateLimit-Policy = %q, want 60;w=60", got)
	}
	// The metadata limit (120/min) saw the 60 operations of the batches that
	// ran, not the refused one's: this call is the 61st.
	if d := env.request("GET", "/api/tlds/com/metadata", ""); d.Code != 200 || exactHeader(d, "RateLimit-Remaining") != "59" {
		t.Errorf("direct call after the refused batch = %d, RateLimit-Remaining %q; want 200 and 59", d.Code, exactHeader(d, "RateLimit-Remaining"))
	}
	// Another client's batches are its own.
	r := httptest.NewRequest("POST", "/api/batch", strings.NewReader(body))
	r.RemoteAddr = "198.51.100.9:1"
	r.Header.Set("Content-Type", "application/json")
	if w := env.do(r); w.Code != 200 {
		t.Errorf("other client's batch = %d, want 200", w.Code)
	}
}

func TestBatchEnvelopeErrors(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	var ops []string
	for range 21 {
		ops = append(ops, `{"op":"tld_requirements","params":{"tld":"com"}}`)
	}
	tests := []struct{ name, body string }{
		{"not json", `operations`},
		{"no operations", `{}`},
		{"operations null", `{"operations":null}`},
		{"empty", `{"operations":[]}`},
		{"too many", `{"operations":[` + strings.Join(ops, ",") + `]}`},
		{"operations not a list", `{"operations":{"op":"tld_requirements"}}`},
		{"operations not objects", `{"operations":[1,2]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := env.request("POST", "/api/batch", tc.body)
			if w.Code != 400 {
				t.Fatalf("= %d %s, want 400", w.Code, w.Body)
			}
			if _, msg := typedError(t, w); strings.Contains(msg, "api.") || strings.Contains(msg, "[]") {
				t.Errorf("message %q shows Go internals", msg)
			}
		})
	}
}

// SPEC §2.12: op is "string or null". An operation that cannot run is a
// result of its own (op null, status 400, a typed error); the rest run.
func TestBatchOperationsThatCannotRunFailAlone(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	w := env.request("POST", "/api/batch", `{"operations":[
		{"id":"unknown","op":"delete_everything"},
		{"id":"missing","params":{}},
		{"id":"number","op":42},
		{"op":"tld_requirements","id":{"a":1}},
		{"id":"fine","op":"tld_requirements","params":{"tld":"com"}}]}`)
	var got struct {
		Results []struct {
			ID     string  `json:"id"`
			Op     *string `json:"op"`
			Status int     `json:"status"`
			Body   struct {
				Error struct{ Code, Message string }
			} `json:"body"`
		} `json:"results"`
		Count, Failed int
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != 200 || got.Count != 5 || got.Failed != 4 {
		t.Fatalf("batch = %d %s, want 200 with 4 of 5 failed", w.Code, w.Body)
	}
	for i, id := range []string{"unknown", "missing", "number", "3"} {
		r := got.Results[i]
		if r.ID != id || r.Status != 400 || r.Body.Error.Code != "validation_error" || r.Body.Error.Message == "" {
			t.Errorf("result %d = %+v, want id %s, 400 validation_error", i, r, id)
		}
		if i < 3 && r.Op != nil {
			t.Errorf("result %d op = %q, want null for an op that is not one", i, *r.Op)
		}
	}
	if r := got.Results[4]; r.ID != "fine" || r.Status != 200 || r.Op == nil || *r.Op != "tld_requirements" {
		t.Errorf("the good operation = %+v, want it run", r)
	}
}

func TestBatchCatalog(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	w := env.request("GET", "/api/batch", "")
	var cat struct {
		Operations []struct {
			Op     string `json:"op"`
			SameAs string `json:"same_as"`
		} `json:"operations"`
		Max     int             `json:"max_operations"`
		Example json.RawMessage `json:"example"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &cat); err != nil || w.Code != 200 {
		t.Fatalf("= %d %s", w.Code, w.Body)
	}
	if cat.Max != 20 || len(cat.Operations) != 4 || fmt.Sprint(cat.Operations[0]) != "{search_domain POST /api/domain/search}" {
		t.Errorf("catalog = %+v", cat)
	}
	var example batchRequest
	if err := json.Unmarshal(cat.Example, &example); err != nil || len(example.Operations) != 4 {
		t.Fatalf("example %s: %v", cat.Example, err)
	}
	for _, op := range example.Operations {
		var name string
		json.Unmarshal(op.Op, &name)
		if _, ok := batchOps[name]; !ok {
			t.Errorf("example has unknown op %s", op.Op)
		}
	}
}
