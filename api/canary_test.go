package api

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

func opsRequest(env *testEnv, method, path, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.SetBasicAuth("ops", "ops-secret")
	return env.do(r)
}

func TestCanaryNeedsOpsCredentials(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for _, tc := range []struct{ name, user, pass string }{
		{"none", "", ""}, {"wrong password", "ops", "nope"}, {"wrong user", "admin", "ops-secret"},
	} {
		r := httptest.NewRequest("POST", "/api/ops/canaries", strings.NewReader(`{}`))
		if tc.user != "" {
			r.SetBasicAuth(tc.user, tc.pass)
		}
		w := env.do(r)
		if w.Code != 401 || w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("%s: %d, want 401 with a challenge", tc.name, w.Code)
		}
	}
	var n int64
	env.db.Model(&models.Canary{}).Count(&n)
	if n != 0 {
		t.Errorf("%d canaries written by refused requests", n)
	}
}

func TestCreateCanaryWritesRowAndTask(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	w := opsRequest(env, "POST", "/api/ops/canaries", `{"steps":4,"step_ms":10}`)
	if w.Code != 202 {
		t.Fatalf("create = %d %s", w.Code, w.Body)
	}
	var got canaryResponse
	json.Unmarshal(w.Body.Bytes(), &got)
	if got.Status != "queued" || got.Steps != 4 || got.StepMS != 10 || got.RequestID == "" {
		t.Errorf("created = %+v", got)
	}
	if loc := w.Header().Get("Location"); loc != "http://api.test/api/ops/canaries/"+got.ID || got.StatusURL != loc {
		t.Errorf("Location = %q status_url = %q", loc, got.StatusURL)
	}
	var e models.OutboxEntry
	if err := env.db.First(&e, "task_type = ?", tasks.TypeCanaryRun).Error; err != nil {
		t.Fatalf("no outbox entry: %v", err)
	}
	if _, err := asynq.NewInspectorFromRedisClient(env.redis.Client).GetTaskInfo(tasks.QueueMaintenance, e.ID); err != nil {
		t.Errorf("task not queued: %v", err)
	}

	w = opsRequest(env, "GET", "/api/ops/canaries/"+got.ID, "")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"status":"queued"`) {
		t.Errorf("get = %d %s", w.Code, w.Body)
	}
	if w := opsRequest(env, "GET", "/api/ops/canaries/"+models.NewID(), ""); w.Code != 404 {
		t.Errorf("unknown canary = %d, want 404", w.Code)
	}
}

func TestCreateCanaryRefusesBadInput(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for _, body := range []string{
		`{"steps":0}`, `{"steps":1001}`, `{"step_ms":-1}`, `{"steps":"three"}`, `{"nope":1}`, `{`, `[]`,
	} {
		w := opsRequest(env, "POST", "/api/ops/canaries", body)
		if w.Code != 400 {
			t.Errorf("%s = %d, want 400", body, w.Code)
			continue
		}
		typedError(t, w)
	}
	var rows, entries int64
	env.db.Model(&models.Canary{}).Count(&rows)
	env.db.Model(&models.OutboxEntry{}).Count(&entries)
	if rows != 0 || entries != 0 {
		t.Errorf("bad input wrote %d canaries and %d outbox entries", rows, entries)
	}
}
