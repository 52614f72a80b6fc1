package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/models"
)

// demoSession is the seeded demo user signed in over HTTP.
type demoSession struct {
	t      *testing.T
	base   string
	client *http.Client
	csrf   string
}

func signInDemo(t *testing.T, api *process) *demoSession {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	s := &demoSession{t: t, base: "http://" + api.addr, client: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	code, body := s.do("POST", "/api/auth/login", `{"email":"demo@domaind.test","password":"demo-password"}`)
	var me struct {
		CSRFToken string `json:"csrf_token"`
	}
	if json.Unmarshal(body, &me); code != 200 || me.CSRFToken == "" {
		t.Fatalf("demo sign-in = %d %s", code, body)
	}
	s.csrf = me.CSRFToken
	return s
}

func (s *demoSession) do(method, path, body string) (int, []byte) {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", s.csrf)
	res, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// startDemo seeds the demo user and its 1,500 domains, starts an api, a
// scheduler and a worker whose registry calls take 100 ms (so a 1,000-domain
// op lasts a few seconds), and signs the demo user in.
func (c *cluster) startDemo() (api, worker *process, s *demoSession) {
	c.t.Helper()
	c.env = append(c.env, "DOMAIND_SEED_DEMO=true")
	c.run("migrate")
	c.run("seed")
	api = c.start("api")
	c.start("scheduler")
	worker = c.start("worker", "DOMAIND_SANDBOX_LATENCY=100ms")
	return api, worker, signInDemo(c.t, api)
}

// kill SIGKILLs p and waits for it to be gone.
func (c *cluster) kill(p *process) {
	c.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	<-p.done
	p.done <- nil
}

// lockDemoDomains asks for a bulk lock of the demo user's first n domains
// and returns the op's id.
func (c *cluster) lockDemoDomains(s *demoSession, n, skip int) string {
	c.t.Helper()
	var names []string
	c.db.Model(&models.Domain{}).Order("name").Offset(skip).Limit(n).Pluck("name", &names)
	if len(names) != n {
		c.t.Fatalf("the demo user has %d domains past %d, want %d", len(names), skip, n)
	}
	body, _ := json.Marshal(map[string]any{"domains": names})
	code, answer := s.do("POST", "/api/domains/bulk/lock", string(body))
	var q struct {
		BulkOpID string `json:"bulkOpId"`
		Total    int    `json:"total"`
	}
	if json.Unmarshal(answer, &q); code != 200 || q.Total != n {
		c.t.Fatalf("bulk lock = %d %s", code, answer)
	}
	return q.BulkOpID
}

// bulkCounts are a bulk op's items by state, read from the database.
func (c *cluster) bulkCounts(id string) map[string]int {
	var rows []struct {
		State string
		N     int
	}
	c.db.Model(&models.BulkItem{}).Select("state, count(*) AS n").Where("bulk_op_id = ?", id).Group("state").Scan(&rows)
	out := map[string]int{}
	for _, r := range rows {
		out[r.State] = r.N
	}
	return out
}

// bulkStatus is the op's status as its owner polls it.
func (s *demoSession) bulkStatus(id string) string {
	s.t.Helper()
	code, body := s.do("GET", "/api/domains/bulk/"+id+"?limit=1", "")
	var st struct{ Status string }
	if json.Unmarshal(body, &st); code != 200 {
		s.t.Fatalf("bulk status = %d %s", code, body)
	}
	return st.Status
}

// wantAppliedOnce checks that every item of op is done and reached the
// registry exactly once, and that the domains are locked.
func (c *cluster) wantAppliedOnce(id string, n int) {
	c.t.Helper()
	var changes, locked int64
	c.db.Model(&models.SandboxChange{}).Where("change LIKE ?", id+"-%").Count(&changes)
	var names []string
	c.db.Model(&models.BulkItem{}).Where("bulk_op_id = ?", id).Pluck("domain", &names)
	c.db.Model(&models.Domain{}).Where("name IN ? AND locked", names).Count(&locked)
	var sandboxLocked int64
	c.db.Model(&models.SandboxName{}).Where("name IN ? AND locked", names).Count(&sandboxLocked)
	if counts := c.bulkCounts(id); counts["done"] != n || changes != int64(n) || locked != int64(n) || sandboxLocked != int64(n) {
		c.t.Errorf("op %s: items %v, %d registry changes, %d domains locked here and %d at the registry; want %d of each", id, counts, changes, locked, sandboxLocked, n)
	}
}

// TestEndToEndBulkOpSurvivesLosingRedisAndItsWorker loses the queue and the
// worker at once in the middle of a 1,000-domain op: Redis (without
// persistence, as CI runs it) is stopped and the worker SIGKILLed. Once
// Redis is back, empty, the rescue gives the op a new task and a new worker
// finishes it, every item applied once.
func TestEndToEndBulkOpSurvivesLosingRedisAndItsWorker(t *testing.T) {
	c := newCluster(t) // skips without the real servers
	redisBin := testtool.Path(t, "the test stops and starts a Redis of its own", "redis-server")
	addr := testtool.FreeAddr(t)
	_, port, _ := strings.Cut(addr, ":")
	startRedis := func() *exec.Cmd {
		cmd := exec.Command(redisBin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c.waitFor("redis up", 10*time.Second, func() bool {
			rc := redis.NewClient(&redis.Options{Addr: addr})
			defer rc.Close()
			return rc.Ping(context.Background()).Err() == nil
		})
		return cmd
	}
	redisProc := startRedis()
	t.Cleanup(func() { redisProc.Process.Kill(); redisProc.Wait() })
	c.setenv("DOMAIND_REDIS_URL", "redis://"+addr+"/0")
	_, w, s := c.startDemo()

	op := c.lockDemoDomains(s, 1000, 0)
	c.waitFor("op under way", 30*time.Second, func() bool { return c.bulkCounts(op)["done"] >= 100 })
	redisProc.Process.Signal(syscall.SIGTERM)
	c.kill(w)
	redisProc.Wait()

	// With Redis gone the op's state is still served from the database; a
	// new op is refused (its rate limit lives in Redis) and writes nothing.
	counts := c.bulkCounts(op)
	if st := s.bulkStatus(op); st != "running" || counts["pending"] == 0 {
		t.Fatalf("after the losses the op is %s with items %v; the test needs it mid-way", st, counts)
	}
	var ops int64
	code, body := s.do("POST", "/api/domains/bulk/unlock", `{"domains":["example.com"]}`)
	if c.db.Model(&models.BulkOp{}).Count(&ops); code != 503 || ops != 1 {
		t.Errorf("bulk op with Redis down = %d %s, %d ops stored; want 503 and the one op", code, body, ops)
	}

	redisProc = startRedis() // empty: the op's task is gone
	c.start("worker")
	c.waitFor("op done after the rescue", 4*time.Minute, func() bool { return s.bulkStatus(op) == "done" })
	c.wantAppliedOnce(op, 1000)
	second := c.lockDemoDomains(s, 100, 1000)
	c.waitFor("a new op done", 30*time.Second, func() bool { return s.bulkStatus(second) == "done" })
	c.wantAppliedOnce(second, 100)
}
