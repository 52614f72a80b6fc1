package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// failoverBudget is how soon after Redis has promoted a replica every
// process must serve again (issue 27: within 10 s).
const failoverBudget = 10 * time.Second

// TestEndToEndRedisFailover runs an api, a worker and a scheduler on a
// Redis of their own, a 6-node Cluster and then a master and replica
// watched by three Sentinels, and kills (SIGKILL) the master that holds
// the maintenance queue. While it is gone /readyz says not ready; once its
// replica is promoted, within failoverBudget /readyz is ready again, the
// api takes an ops request (its login limiter is in Redis) and queues a
// canary the worker runs, and the sweep the scheduler asks for hands an
// outbox entry to the worker. It prints the figures.
func TestEndToEndRedisFailover(t *testing.T) {
	needRealServers(t)
	testtool.Path(t, "the test runs Redis servers of its own", "redis-server")
	base := 7100 + os.Getpid()%40*10 // apart from make test-cluster's 7000-7005
	t.Run("cluster", func(t *testing.T) {
		url, env := startRedis(t, "redis-cluster.sh", "CLUSTER_PORT="+strconv.Itoa(base), "CLUSTER_DIR="+t.TempDir())
		dir := strings.TrimPrefix(env[1], "CLUSTER_DIR=")
		nodes := make([]string, 6)
		for i := range nodes {
			nodes[i] = fmt.Sprintf("127.0.0.1:%d", base+i)
		}
		node := redis.NewClient(&redis.Options{Addr: nodes[0]})
		slot := int(node.ClusterKeySlot(context.Background(), "asynq:{"+tasks.QueueMaintenance+"}:pending").Val())
		node.Close()
		failover(t, url, func() string { return masterOf(nodes, "", slot) }, func(m string) string { return masterOf(nodes, m, slot) },
			func(m string) string { return filepath.Join(dir, strings.TrimPrefix(m, "127.0.0.1:"), "redis.pid") })
	})
	t.Run("sentinel", func(t *testing.T) {
		port := base + 6
		url, env := startRedis(t, "redis-sentinel.sh", "SENTINEL_PORT="+strconv.Itoa(port), "SENTINEL_DIR="+t.TempDir())
		dir := strings.TrimPrefix(env[1], "SENTINEL_DIR=")
		sentinel := fmt.Sprintf("127.0.0.1:%d", port+2)
		master := func(string) string {
			s := redis.NewSentinelClient(&redis.Options{Addr: sentinel, DialTimeout: time.Second})
			defer s.Close()
			addr, err := s.GetMasterAddrByName(context.Background(), "domaind").Result()
			if err != nil || len(addr) != 2 {
				return ""
			}
			return addr[0] + ":" + addr[1]
		}
		failover(t, url, func() string { return master("") }, master,
			func(m string) string { return filepath.Join(dir, strings.TrimPrefix(m, "127.0.0.1:"), "redis.pid") })
	})
}

// startRedis starts Redis servers with scripts/<script> start and env,
// stopped at the test's end, and returns their URL and env.
func startRedis(t *testing.T, script string, env ...string) (string, []string) {
	t.Helper()
	start := exec.Command("../../scripts/"+script, "start")
	start.Env = append(os.Environ(), env...)
	out, err := start.Output()
	if err != nil {
		t.Fatalf("%s start %v: %v\n%s", script, env, err, out)
	}
	t.Cleanup(func() {
		stop := exec.Command("../../scripts/"+script, "stop")
		stop.Env = start.Env
		stop.Run()
	})
	return strings.TrimSpace(string(out)), env
}

// failover runs the roles on the Redis at url, kills the master that
// masterNow names (pidFile says where its pid is), waits until
// masterAfter (asked with the dead master) names another, and checks and
// prints how soon each role serves again.
func failover(t *testing.T, url string, masterNow func() string, masterAfter func(dead string) string, pidFile func(master string) string) {
	c := newCluster(t) // skips without the real servers
	c.setenv("DOMAIND_REDIS_URL", url)
	c.run("migrate")
	api := c.start("api")
	c.start("worker")
	c.start("scheduler")
	ready := func() bool {
		res, err := http.Get("http://" + api.addr + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	}
	served := c.createCanary(api, 1, 1)
	c.waitFor("a canary before the failover", 30*time.Second, func() bool { return c.canary(api, served.ID).Status == "done" })

	master := masterNow()
	pid, err := os.ReadFile(pidFile(master))
	if err != nil {
		t.Fatalf("the pid of master %q: %v", master, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(pid)))
	if err := syscall.Kill(n, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the master %s: %v", master, err)
	}
	killed := time.Now()

	sawUnready := false
	var promoted time.Time
	c.waitFor("the replica promoted", 30*time.Second, func() bool {
		sawUnready = sawUnready || !ready()
		if m := masterAfter(master); m != master && m != "" {
			promoted = time.Now()
		}
		return !promoted.IsZero()
	})
	if !sawUnready {
		t.Errorf("/readyz said ready while the master %s was dead", master)
	}

	c.waitFor("ready again", failoverBudget, ready)
	readyAt := time.Since(promoted)
	var canary canaryStatus
	c.waitFor("an ops request taken", failoverBudget, func() bool {
		code, body := opsDo(t, "POST", "http://"+api.addr+"/api/ops/canaries", `{"steps":1,"step_ms":1}`, "ops", "e2e-ops-password")
		canary = decodeCanary(t, body)
		return code == 202
	})
	c.waitFor("its canary run", failoverBudget, func() bool { return c.canary(api, canary.ID).Status == "done" })
	servedAt := time.Since(promoted)

	// An outbox entry no api hands over: the sweep the scheduler asks for
	// every 5 s must, the first slot after the promotion being up to 5 s
	// away.
	orphan := models.Canary{ID: models.NewID(), Steps: 1}
	task := tasks.New(tasks.CanaryRunPayload{CanaryID: orphan.ID})
	c.db.Create(&orphan)
	c.db.Create(&models.OutboxEntry{ID: models.NewID(), TaskType: task.Type(), Payload: task.Payload(), Queue: tasks.QueueMaintenance})
	c.waitFor("the swept canary run", failoverBudget+5*time.Second, func() bool { return c.canary(api, orphan.ID).Status == "done" })
	t.Logf("failover: master %s killed; replica %s promoted after %.1fs; /readyz ready %.1fs after the promotion, an api request queued a task a worker ran %.1fs after it, the scheduler swept %.1fs after it",
		master, masterAfter(master), promoted.Sub(killed).Seconds(), readyAt.Seconds(), servedAt.Seconds(), time.Since(promoted).Seconds())
}

// masterOf is the address of the master that holds slot as the first of
// nodes but skip that answers sees it, "" when none answers.
func masterOf(nodes []string, skip string, slot int) string {
	for _, addr := range nodes {
		if addr == skip {
			continue
		}
		node := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second})
		ranges, err := node.ClusterSlots(context.Background()).Result()
		node.Close()
		if err != nil {
			continue
		}
		for _, r := range ranges {
			if r.Start <= slot && slot <= r.End && len(r.Nodes) > 0 {
				return r.Nodes[0].Addr
			}
		}
		return ""
	}
	return ""
}
