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

// Policy is the dashboard's Content-Security-Policy. asynqmon's page boots
// with inline scripts and Material UI writes inline styles, which it must
// allow; no other site may frame it (its buttons retry, delete and pause),
// and it reaches nothing but this origin and Google's fonts.
const Policy = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline' https://fonts.googleapis.com; " +
	"font-src https://fonts.gstatic.com; img-src 'self' data:; connect-src 'self'; manifest-src 'self'; base-uri 'none'; " +
	"form-action 'none'; frame-ancestors 'none'"

// ServeHTTP serves asynqmon's pages and API, under Policy.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", Policy)
	w.Header().Set("X-Frame-Options", "DENY") // for browsers without frame-ancestors
	d.mon.ServeHTTP(w, r)
}

// Close releases asynqmon's Redis connections.
func (d *Dashboard) Close() error { return d.mon.Close() }
