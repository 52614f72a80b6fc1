package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

// cluster is the binary running as separate processes against one real
// Postgres schema and one real Redis database.
type cluster struct {
	t     *testing.T
	bin   string
	env   []string
	db    *gorm.DB
	redis *platformtest.Redis // the processes' Redis
}

// process is one running role, its output kept for assertions and failures.
type process struct {
	role string
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	out  bytes.Buffer
	done chan error
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// newCluster builds the binary's world for t: a schema, a Redis database
// and the local RDAP server. The tests that use it do not run in parallel:
// each starts several processes of the binary and times what they do
// (kills mid-task, polls with deadlines), which two such tests sharing the
// machine's two cores would make flaky.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	needRealServers(t)
	db, dbURL := modelstest.NewDBWithURL(t)
	r := platformtest.NewRedis(t)
	// RDAP is outside the machine: a local server answers every .com name,
	// and the processes find it through a bootstrap file.
	rdapSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/com/v1/domain/")
		w.Header().Set("Content-Type", "application/rdap+json")
		fmt.Fprintf(w, `{"objectClassName":"domain","ldhName":%q,"status":["active"],
			"events":[{"eventAction":"registration","eventDate":"2001-02-03T04:05:06Z"}],
			"entities":[{"roles":["registrar"],"vcardArray":["vcard",[["version",{},"text","4.0"],["fn",{},"text","E2E Registrar"]]]}]}`, name)
	}))
	t.Cleanup(rdapSrv.Close)
	bootstrap := filepath.Join(t.TempDir(), "dns.json")
	if err := os.WriteFile(bootstrap, []byte(`{"version":"1.0","publication":"2026-01-01T00:00:00Z","services":[[["com"],["`+rdapSrv.URL+`/com/v1/"]]]}`), 0o600); err != nil {
		t.Fatal(err)
	}

	bin := filepath.Join(t.TempDir(), "domaind")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return &cluster{t: t, bin: bin, db: db, redis: r, env: []string{
		"DOMAIND_DATABASE_URL=" + dbURL,
		"DOMAIND_REDIS_URL=" + r.URL,
		"DOMAIND_SECRET_KEY=e2e-secret-key-0123456789abcdef0123456789",
		"DOMAIND_OPS_USER=ops",
		"DOMAIND_OPS_PASSWORD=e2e-ops-password",
		"DOMAIND_DATA_DIR=" + t.TempDir(),
		"DOMAIND_LOG_LEVEL=debug",
		"DOMAIND_LOG_FORMAT=json",
		"DOMAIND_RDAP_BOOTSTRAP=" + bootstrap,
		"DOMAIND_WHOIS_IANA_ADDR=127.0.0.1:9",    // no WHOIS outside: the fallback fails fast
		"DOMAIND_FETCH_ALLOW_CIDRS=127.0.0.1/32", // the local RDAP server, past the SSRF guard
	}}
}

// getenv is the value of key in the processes' environment.
func (c *cluster) getenv(key string) string {
	for _, kv := range c.env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// setenv sets key in the processes' environment.
func (c *cluster) setenv(key, value string) {
	for i, kv := range c.env {
		if strings.HasPrefix(kv, key+"=") {
			c.env[i] = key + "=" + value
			return
		}
	}
	c.env = append(c.env, key+"="+value)
}

// needRealServers skips an end-to-end test on the embedded default.
func needRealServers(t *testing.T) {
	t.Helper()
	if os.Getenv("DOMAIND_TEST_DATABASE_URL") == "" || os.Getenv("DOMAIND_TEST_REDIS_URL") == "" {
		t.Skip("end-to-end test runs the roles as processes against real Postgres and Redis: set DOMAIND_TEST_DATABASE_URL and DOMAIND_TEST_REDIS_URL")
	}
}

// start runs role, with extraEnv added to the cluster's environment, and
// waits until its /readyz answers 200.
func (c *cluster) start(role string, extraEnv ...string) *process {
	c.t.Helper()
	p := &process{role: role, addr: testtool.FreeAddr(c.t), done: make(chan error, 1)}
	p.cmd = exec.Command(c.bin, role)
	p.cmd.Env = append(append(os.Environ(), c.env...), extraEnv...)
	p.cmd.Env = append(p.cmd.Env, "DOMAIND_HTTP_ADDR="+p.addr, "DOMAIND_BASE_URL=http://"+p.addr)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		c.t.Fatalf("start %s: %v", role, err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	c.t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if c.t.Failed() {
			c.t.Logf("--- %s output ---\n%s", role, p.output())
		}
	})
	c.waitFor(fmt.Sprintf("%s ready", role), 30*time.Second, func() bool {
		res, err := http.Get("http://" + p.addr + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	})
	return p
}

func (c *cluster) run(args ...string) string {
	c.t.Helper()
	cmd := exec.Command(c.bin, args...)
	cmd.Env = append(os.Environ(), c.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("domaind %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (c *cluster) waitFor(what string, limit time.Duration, ok func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type canaryStatus struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	StepsDone int    `json:"steps_done"`
	Attempts  int    `json:"attempts"`
	RequestID string `json:"request_id"`
}

func opsDo(t *testing.T, method, url, body, user, pass string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func (c *cluster) createCanary(api *process, steps, stepMS int) canaryStatus {
	c.t.Helper()
	code, body := opsDo(c.t, "POST", "http://"+api.addr+"/api/ops/canaries", fmt.Sprintf(`{"steps":%d,"step_ms":%d}`, steps, stepMS), "ops", "e2e-ops-password")
	if code != 202 {
		c.t.Fatalf("create canary = %d %s", code, body)
	}
	return decodeCanary(c.t, body)
}

func decodeCanary(tb testing.TB, body []byte) canaryStatus {
	tb.Helper()
	var s canaryStatus
	if err := json.Unmarshal(body, &s); err != nil {
		tb.Fatalf("canary body %s: %v", body, err)
	}
	return s
}

func (c *cluster) canary(api *process, id string) canaryStatus {
	c.t.Helper()
	code, body := opsDo(c.t, "GET", "http://"+api.addr+"/api/ops/canaries/"+id, "", "ops", "e2e-ops-password")
	if code != 200 {
		c.t.Fatalf("get canary = %d %s", code, body)
	}
	return decodeCanary(c.t, body)
}

func TestEndToEndSeparateProcesses(t *testing.T) {
	c := newCluster(t)
	c.run("migrate")
	c.run("seed")
	api := c.start("api")
	w := c.start("worker")
	c.start("scheduler")
	dash := c.start("dashboard")

	// A WHOIS request crosses the API, the outbox, the rdap queue and the
	// worker, and comes back synchronously.
	code, body := opsDo(t, "POST", "http://"+api.addr+"/api/tools/whois", `{"domain":"e2e-example.com"}`, "", "")
	if code != 201 || !strings.Contains(string(body), `"registrar":"E2E Registrar"`) || !strings.Contains(string(body), `"raw_source":"RDAP"`) {
		t.Errorf("whois = %d %s", code, body)
	}
	// The search streams a row per common TLD from the seeded sandbox registry.
	code, body = opsDo(t, "POST", "http://"+api.addr+"/api/domain/search", `{"q":"google.com"}`, "", "")
	if code != 200 || strings.Count(string(body), `"kind":"row"`) != 12 || !strings.Contains(string(body), `"state":"registered"`) {
		t.Errorf("search = %d %s", code, body)
	}

	created := c.createCanary(api, 3, 20)
	c.waitFor("canary done", 30*time.Second, func() bool { return c.canary(api, created.ID).Status == "done" })
	got := c.canary(api, created.ID)
	if got.StepsDone != 3 || got.Attempts != 1 {
		t.Errorf("canary = %+v, want 3 steps in 1 attempt", got)
	}
	if !strings.Contains(w.output(), `"request_id":"`+created.RequestID+`"`) {
		t.Errorf("worker log has no line with the API request id %s", created.RequestID)
	}

	// An outbox entry whose fast path never happened (the API died after commit):
	// the scheduler's sweep must get it to the worker.
	db := c.db
	orphan := models.Canary{ID: models.NewID(), Steps: 1}
	task := tasks.New(tasks.CanaryRunPayload{CanaryID: orphan.ID})
	if err := db.Create(&orphan).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&models.OutboxEntry{ID: models.NewID(), TaskType: task.Type(), Payload: task.Payload(), Queue: tasks.QueueMaintenance}).Error; err != nil {
		t.Fatal(err)
	}
	c.waitFor("orphaned outbox entry swept and run", 30*time.Second, func() bool { return c.canary(api, orphan.ID).Status == "done" })

	queuesURL := "http://" + dash.addr + "/monitoring/api/queues"
	if code, _ := opsDo(t, "GET", queuesURL, "", "", ""); code != 401 {
		t.Errorf("dashboard without credentials = %d, want 401", code)
	}
	if code, _ := opsDo(t, "GET", queuesURL, "", "ops", "wrong"); code != 401 {
		t.Errorf("dashboard with a wrong password = %d, want 401", code)
	}
	code, body = opsDo(t, "GET", queuesURL, "", "ops", "e2e-ops-password")
	if code != 200 || !strings.Contains(string(body), `"queue":"maintenance"`) {
		t.Errorf("dashboard queues = %d %s", code, body)
	}
	if code, _ := opsDo(t, "POST", "http://"+dash.addr+"/monitoring/api/queues/maintenance:pause", "", "ops", "e2e-ops-password"); code != 405 {
		t.Errorf("pausing through the read-only dashboard = %d, want 405", code)
	}

	// Graceful stop of the worker: SIGTERM in the middle of a task. The
	// worker finishes it or hands it back; either way it exits cleanly, and
	// the next worker leaves the canary done with each step written once.
	const steps = 10
	created = c.createCanary(api, steps, 200)
	c.waitFor("canary started", 30*time.Second, func() bool { return c.canary(api, created.ID).StepsDone >= 2 })
	c.stop(w)
	c.start("worker")
	c.waitFor("canary done after the worker's stop", 30*time.Second, func() bool { return c.canary(api, created.ID).Status == "done" })
	var rows int64
	db.Model(&models.CanaryStep{}).Where("canary_id = ?", created.ID).Count(&rows)
	if got := c.canary(api, created.ID); got.StepsDone != steps || rows != steps {
		t.Errorf("after a graceful worker stop canary = %+v with %d step rows, want %d steps written once", got, rows, steps)
	}

	// Graceful stop of the API: a search in flight when SIGTERM arrives
	// (each sandbox check takes a second) still streams every row and done.
	slow := c.start("api", "DOMAIND_SANDBOX_LATENCY=1s")
	res, err := http.Post("http://"+slow.addr+"/api/domain/search", "application/json", strings.NewReader(`{"q":"graceful-stop.com"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	events := bufio.NewScanner(res.Body)
	if !events.Scan() || !strings.Contains(events.Text(), `"kind":"header"`) {
		t.Fatalf("search did not start streaming: %q %v", events.Text(), events.Err())
	}
	slow.cmd.Process.Signal(syscall.SIGTERM) // the request is in flight: its header has arrived
	var rest []string
	for events.Scan() {
		rest = append(rest, events.Text())
	}
	if len(rest) == 0 || !strings.Contains(rest[len(rest)-1], `"kind":"done"`) || strings.Count(strings.Join(rest, "\n"), `"kind":"row"`) != 12 {
		t.Errorf("search cut by the API's stop: got after the header %q (%v)", rest, events.Err())
	}
	c.waitExit(slow)
	c.stop(api)
}

// stop sends p SIGTERM and waits for a clean exit.
func (c *cluster) stop(p *process) {
	c.t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	c.waitExit(p)
}

// waitExit waits for p, signalled to stop, to exit cleanly. (A second
// signal would kill it at once.)
func (c *cluster) waitExit(p *process) {
	c.t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			c.t.Errorf("%s exited with %v after SIGTERM", p.role, err)
		}
	case <-time.After(30 * time.Second):
		c.t.Errorf("%s did not stop within 30s of SIGTERM", p.role)
	}
}

// TestEndToEndWorkerKilledMidTask kills a worker in the middle of two
// tasks, a canary and a 1,000-domain bulk lock; a new worker finishes both
// with every step and every item applied once.
func TestEndToEndWorkerKilledMidTask(t *testing.T) {
	c := newCluster(t)
	api, w, s := c.startDemo()

	bulk := c.lockDemoDomains(s, 1000, 0)
	const steps = 40
	created := c.createCanary(api, steps, 150)
	c.waitFor("canary and bulk op halfway", 30*time.Second, func() bool {
		return c.canary(api, created.ID).StepsDone >= 8 && c.bulkCounts(bulk)["done"] >= 100
	})
	c.kill(w)
	killedAt := c.canary(api, created.ID)
	if killedAt.Status != "running" || killedAt.StepsDone >= steps {
		t.Fatalf("at the kill the canary was %+v; the test needs it mid-task", killedAt)
	}
	if counts := c.bulkCounts(bulk); counts["pending"] == 0 || s.bulkStatus(bulk) != "running" {
		t.Fatalf("at the kill the bulk op was %s with items %v; the test needs it mid-task", s.bulkStatus(bulk), counts)
	}

	// asynq recovers the task once its lease has expired (30 s plus 30 s of
	// clock-skew allowance, checked each minute): this takes one to two minutes.
	c.start("worker")
	c.waitFor("canary and bulk op finished by the new worker", 4*time.Minute, func() bool {
		return c.canary(api, created.ID).Status == "done" && s.bulkStatus(bulk) == "done"
	})
	c.wantAppliedOnce(bulk, 1000)

	got := c.canary(api, created.ID)
	if got.StepsDone != steps || got.Attempts != 2 {
		t.Errorf("after recovery canary = %+v, want %d steps in 2 attempts", got, steps)
	}
	db := c.db
	var byAttempt []struct {
		Attempt int
		N       int
	}
	db.Model(&models.CanaryStep{}).Select("attempt, count(*) as n").Where("canary_id = ?", created.ID).Group("attempt").Order("attempt").Scan(&byAttempt)
	if len(byAttempt) != 2 || byAttempt[0].N < killedAt.StepsDone || byAttempt[0].N+byAttempt[1].N != steps {
		t.Errorf("steps by attempt = %+v; want the first worker's %d+ steps kept and the rest written once by the second", byAttempt, killedAt.StepsDone)
	}
}
