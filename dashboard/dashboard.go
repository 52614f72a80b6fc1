// Package dashboard serves asynqmon (queue health: sizes, latency, failures,
// task details) under /monitoring, behind the ops credentials. It is
// read-only unless DOMAIND_DASHBOARD_READ_ONLY=false.
package dashboard

import (
	"net/http"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"

	"github.com/domaind/domaind/internal/opsauth"
)

// RootPath is where the dashboard lives, in the api role of `domaind all`
// and in the dashboard role alike.
const RootPath = "/monitoring"

// Dashboard is the guarded asynqmon handler.
type Dashboard struct {
	mon   *asynqmon.HTTPHandler
	creds opsauth.Credentials
}

// New returns the dashboard on the Redis of redisOpt.
func New(redisOpt asynq.RedisConnOpt, creds opsauth.Credentials, readOnly bool) *Dashboard {
	return &Dashboard{
		mon:   asynqmon.New(asynqmon.Options{RootPath: RootPath, RedisConnOpt: redisOpt, ReadOnly: readOnly}),
		creds: creds,
	}
}

// ServeHTTP answers 401 with a Basic challenge unless the request carries the ops credentials.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !d.creds.Check(r) {
		w.Header().Set("WWW-Authenticate", opsauth.Challenge)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"code":"unauthorized","message":"ops credentials required"}}`))
		return
	}
	d.mon.ServeHTTP(w, r)
}

// Close releases asynqmon's Redis connections.
func (d *Dashboard) Close() error { return d.mon.Close() }
