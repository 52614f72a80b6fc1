// Package metrics owns the process's Prometheus registry and the metrics the
// roles record: HTTP latency by route, task duration and failures by type,
// and asynq queue health read through the inspector at scrape time.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is one process's registry and instruments.
type Metrics struct {
	Registry     *prometheus.Registry
	httpDuration *prometheus.HistogramVec
	taskDuration *prometheus.HistogramVec
	taskFailures *prometheus.CounterVec
	degraded     *prometheus.CounterVec
	foundDone    *prometheus.CounterVec
}

// New returns a registry with Go and process collectors and the service's instruments.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "domaind_http_request_duration_seconds",
			Help:    "HTTP request latency by route and status class.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method", "route", "status"}),
		taskDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "domaind_task_duration_seconds",
			Help:    "Task handler run time by task type and outcome.",
			Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 10, 30, 60, 300},
		}, []string{"type", "outcome"}),
		taskFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "domaind_task_failures_total",
			Help: "Task handler failures by task type (each failed attempt counts).",
		}, []string{"type"}),
		foundDone: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "domaind_task_found_done_total",
			Help: "Task runs that found their work done by an earlier run (run again after a crash or a Redis outage) and changed nothing, by task type.",
		}, []string{"type"}),
		degraded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "domaind_degraded_total",
			Help: "Decisions taken without a backing service, by what decided (registry_budget: a registry query allowed or refused by the process's own share while Redis could not count).",
		}, []string{"what"}),
	}
	m.Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpDuration, m.taskDuration, m.taskFailures, m.degraded, m.foundDone,
	)
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// ObserveHTTP records one request. route is the route pattern, never the raw path.
func (m *Metrics) ObserveHTTP(method, route string, status int, d time.Duration) {
	m.httpDuration.WithLabelValues(method, route, strconv.Itoa(status/100)+"xx").Observe(d.Seconds())
}

// FoundDone counts one run of a task of type typ that found its work done.
func (m *Metrics) FoundDone(typ string) { m.foundDone.WithLabelValues(typ).Inc() }

// Degraded counts one decision what took without a backing service.
func (m *Metrics) Degraded(what string) { m.degraded.WithLabelValues(what).Inc() }

// ObserveTask records one task attempt.
func (m *Metrics) ObserveTask(typ string, d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
		m.taskFailures.WithLabelValues(typ).Inc()
	}
	m.taskDuration.WithLabelValues(typ, outcome).Observe(d.Seconds())
}
