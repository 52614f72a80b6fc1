package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/dashboard"
	"github.com/domaind/domaind/internal/opsauth"
	"github.com/domaind/domaind/internal/platform/platformtest"
)

func TestDashboardAuthAndReadOnly(t *testing.T) {
	r := platformtest.NewRedis(t)
	client := asynq.NewClientFromRedisClient(r.Client)
	if _, err := client.EnqueueContext(context.Background(), asynq.NewTask("test:x", nil), asynq.Queue("tools")); err != nil {
		t.Fatal(err)
	}
	creds := opsauth.Credentials{User: "ops", Password: "pw"}
	ro := dashboard.New(r.Opt, creds, true)
	t.Cleanup(func() { ro.Close() })
	rw := dashboard.New(r.Opt, creds, false)
	t.Cleanup(func() { rw.Close() })

	send := func(d *dashboard.Dashboard, method, path, user, pass string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		w := httptest.NewRecorder()
		d.ServeHTTP(w, req)
		return w
	}
	if w := send(ro, "GET", "/monitoring/api/queues", "", ""); w.Code != 401 || w.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("no credentials = %d, want 401 with a challenge", w.Code)
	}
	if w := send(ro, "GET", "/monitoring/api/queues", "ops", "wrong"); w.Code != 401 {
		t.Errorf("wrong password = %d, want 401", w.Code)
	}
	w := send(ro, "GET", "/monitoring/api/queues", "ops", "pw")
	if w.Code != 200 {
		t.Fatalf("with credentials = %d %s", w.Code, w.Body)
	}
	var body struct {
		Queues []struct {
			Queue   string `json:"queue"`
			Pending int    `json:"pending"`
		} `json:"queues"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || len(body.Queues) != 1 || body.Queues[0].Queue != "tools" || body.Queues[0].Pending != 1 {
		t.Errorf("queues = %s", w.Body)
	}
	if w := send(ro, "GET", "/monitoring/", "ops", "pw"); w.Code != 200 {
		t.Errorf("UI page = %d", w.Code)
	}
	if w := send(ro, "POST", "/monitoring/api/queues/tools:pause", "ops", "pw"); w.Code != 405 {
		t.Errorf("pause on read-only dashboard = %d, want 405", w.Code)
	}
	if w := send(rw, "POST", "/monitoring/api/queues/tools:pause", "ops", "pw"); w.Code != 204 && w.Code != 200 {
		t.Errorf("pause on writable dashboard = %d %s", w.Code, w.Body)
	}
}
