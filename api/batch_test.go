package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/domaind/domaind/models"
)

type batchReply struct {
	Results []struct {
		ID     string          `json:"id"`
		Op     *string         `json:"op"`
		Status int             `json:"status"`
		Body   json.RawMessage `json:"body"`
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
		{"", "", ""},
	}
	wantIDs := []string{"p", "1", "7", "3", "4", "5", "6"}
	wantStatus := []int{200, 200, 200, 400, 404, 400, 400}
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

func TestBatchCountsEachOperationAgainstItsLimit(t *testing.T) {
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

func TestBatchReachesNothingMoreThanAnAnonymousCall(t *testing.T) {
	env := newTestEnv(t)
	seedTLDs(t, env)
	// Ops credentials on the batch request are not passed on: the path
	// trick lands on the router, anonymous, and finds nothing.
	r := runBatch(t, env, `{"operations":[{"op":"tld_requirements","params":{"tld":"../ops/canaries/x"}}]}`,
		"Authorization", "Basic b3BzOm9wcy1zZWNyZXQ=")
	if r.Results[0].Status < 400 {
		t.Errorf("status = %d %s", r.Results[0].Status, r.Results[0].Body)
	}
	var canaries int64
	env.db.Model(&models.Canary{}).Count(&canaries)
	if canaries != 0 {
		t.Error("a batch operation created a canary")
	}
}

func TestBatchEnvelopeErrors(t *testing.T) {
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
		{"unknown op", `{"operations":[{"op":"delete_everything"}]}`},
		{"missing op", `{"operations":[{"params":{}}]}`},
		{"bad id", `{"operations":[{"op":"tld_requirements","id":{"a":1}}]}`},
		{"operations not a list", `{"operations":{"op":"tld_requirements"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := env.request("POST", "/api/batch", tc.body)
			if w.Code != 400 {
				t.Fatalf("= %d %s, want 400", w.Code, w.Body)
			}
			typedError(t, w)
		})
	}
}

func TestBatchCatalog(t *testing.T) {
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
		if _, ok := batchOps[op.Op]; !ok {
			t.Errorf("example has unknown op %q", op.Op)
		}
	}
}
