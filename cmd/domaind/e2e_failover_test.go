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

// failoverBudget is how soon after a Redis Cluster has promoted a replica
// every process must serve again (issue 27: within 10 s).
const failoverBudget = 10 * time.Second

// TestEndToEndRedisClusterFailover runs an api, a worker and a scheduler
// on a 6-node Redis Cluster of its own and kills (SIGKILL) the master that
// holds the maintenance queue. While the master is gone /readyz says not
// ready; once the cluster has promoted its replica, within failoverBudget
// /readyz is ready again, the api takes an ops request (its login limiter
// is in Redis) and queues a canary the worker runs, and the scheduler's
// sweep hands an outbox entry to the worker. It prints the figures.
func TestEndToEndRedisClusterFailover(t *testing.T) {
	c := newCluster(t) // skips without the real servers
	testtool.Path(t, "the test runs a Redis Cluster of its own", "redis-server")
	port := 7100 + os.Getpid()%50*10 // apart from make test-cluster's 7000-7005
	dir := t.TempDir()
	script := exec.Command("../../scripts/redis-cluster.sh", "start")
	script.Env = append(os.Environ(), "CLUSTER_PORT="+strconv.Itoa(port), "CLUSTER_DIR="+dir)
	out, err := script.Output()
	if err != nil {
		t.Fatalf("start a redis cluster on %d: %v\n%s", port, err, out)
	}
	t.Cleanup(func() {
		stop := exec.Command("../../scripts/redis-cluster.sh", "stop")
		stop.Env = script.Env
		stop.Run()
	})
	url := strings.TrimSpace(string(out))
	for i, kv := range c.env {
		if strings.HasPrefix(kv, "DOMAIND_REDIS_URL=") {
			c.env[i] = "DOMAIND_REDIS_URL=" + url
		}
	}
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

	ctx := context.Background()
	ports := make([]string, 6)
	for i := range ports {
		ports[i] = fmt.Sprintf("127.0.0.1:%d", port+i)
	}
	nodes := redis.NewClusterClient(&redis.ClusterOptions{Addrs: ports})
	slot := int(nodes.ClusterKeySlot(ctx, "asynq:{"+tasks.QueueMaintenance+"}:pending").Val())
	nodes.Close()
	master := masterOf(ports, "", slot)
	pid, err := os.ReadFile(filepath.Join(dir, strings.TrimPrefix(master, "127.0.0.1:"), "redis.pid"))
	if err != nil {
		t.Fatal(err)
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
		if m := masterOf(ports, master, slot); m != master && m != "" {
			promoted = time.Now()
		}
		return !promoted.IsZero()
	})
	if !sawUnready {
		t.Errorf("/readyz said ready while the master of slot %d was dead", slot)
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
	// every 5 s must.
	orphan := models.Canary{ID: models.NewID(), Steps: 1}
	task := tasks.New(tasks.CanaryRunPayload{CanaryID: orphan.ID})
	c.db.Create(&orphan)
	c.db.Create(&models.OutboxEntry{ID: models.NewID(), TaskType: task.Type(), Payload: task.Payload(), Queue: tasks.QueueMaintenance})
	c.waitFor("the swept canary run", failoverBudget, func() bool { return c.canary(api, orphan.ID).Status == "done" })
	t.Logf("failover: master %s of slot %d killed; replica promoted after %.1fs; /readyz ready %.1fs after the promotion, an api request queued a task a worker ran %.1fs after it, the scheduler swept %.1fs after it",
		master, slot, promoted.Sub(killed).Seconds(), readyAt.Seconds(), servedAt.Seconds(), time.Since(promoted).Seconds())
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
