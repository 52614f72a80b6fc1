package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/dashboard"
	"github.com/domaind/domaind/internal/platform/platformtest"
)

// The ops login and the cross-site check are the api package's (they
// guard every ops route); here, what asynqmon serves.
func TestDashboardReadOnly(t *testing.T) {
	t.Parallel()
	r := platformtest.NewRedis(t)
	client := asynq.NewClientFromRedisClient(r.Client)
	if _, err := client.EnqueueContext(context.Background(), asynq.NewTask("test:x", nil), asynq.Queue("tools")); err != nil {
		t.Fatal(err)
	}
	ro := dashboard.New(r.Opt, true)
	t.Cleanup(func() { ro.Close() })
	rw := dashboard.New(r.Opt, false)
	t.Cleanup(func() { rw.Close() })

	send := func(d *dashboard.Dashboard, method, path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		d.ServeHTTP(w, httptest.NewRequest(method, path, nil))
		return w
	}
	w := send(ro, "GET", "/monitoring/api/queues")
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
	if w := send(ro, "GET", "/monitoring/"); w.Code != 200 || w.Header().Get("X-Frame-Options") != "DENY" ||
		!strings.Contains(w.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("UI page = %d, CSP %q, X-Frame-Options %q; want 200, not to be framed", w.Code,
			w.Header().Get("Content-Security-Policy"), w.Header().Get("X-Frame-Options"))
	}
	if w := send(ro, "POST", "/monitoring/api/queues/tools:pause"); w.Code != 405 {
		t.Errorf("pause on read-only dashboard = %d, want 405", w.Code)
	}
	if w := send(rw, "POST", "/monitoring/api/queues/tools:pause"); w.Code != 204 && w.Code != 200 {
		t.Errorf("pause on writable dashboard = %d %s", w.Code, w.Body)
	}
}
