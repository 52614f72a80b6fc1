// Package dashboard serves asynqmon (queue health: sizes, latency, failures,
// task details) under /monitoring. It is read-only unless
// DOMAIND_DASHBOARD_READ_ONLY=false. It has no guard of its own: the api
// package mounts it behind the ops login and the cross-site check that
// guard every ops route.
package dashboard

import (
	"net/http"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"
)

// RootPath is where the dashboard lives, in the api role of `domaind all`
// and in the dashboard role alike.
const RootPath = "/monitoring"

// Dashboard is the asynqmon handler.
type Dashboard struct {
	mon *asynqmon.HTTPHandler
}

// New returns the dashboard on the Redis of redisOpt.
func New(redisOpt asynq.RedisConnOpt, readOnly bool) *Dashboard {
	return &Dashboard{mon: asynqmon.New(asynqmon.Options{RootPath: RootPath, RedisConnOpt: redisOpt, ReadOnly: readOnly})}
}

// ServeHTTP serves asynqmon's pages and API.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.mon.ServeHTTP(w, r) }

// Close releases asynqmon's Redis connections.
func (d *Dashboard) Close() error { return d.mon.Close() }
