package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// BacklogScrapeTimeout bounds the reading of the backlog at a scrape.
const BacklogScrapeTimeout = 5 * time.Second

// RegisterBacklog registers domaind_ops_backlog{what}, the work the
// service left for ops, counted by count (internal/backlog's Counts, by
// kind) when Prometheus scrapes, and domaind_ops_backlog_scrape_error.
func (m *Metrics) RegisterBacklog(count func(context.Context) (map[string]int64, error)) {
	m.Registry.MustRegister(backlogCollector{count: count})
}

var (
	backlogSize = prometheus.NewDesc("domaind_ops_backlog",
		"Work waiting for ops by kind: transfers the registry left unconfirmed, card refunds that failed, returns given up.", []string{"what"}, nil)
	backlogScrapeErr = prometheus.NewDesc("domaind_ops_backlog_scrape_error",
		"1 when the work waiting for ops could not be counted from the database.", nil, nil)
)

// backlogCollector reads the backlog at scrape time.
type backlogCollector struct {
	count func(context.Context) (map[string]int64, error)
}

// Describe implements prometheus.Collector.
func (backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- backlogSize
	ch <- backlogScrapeErr
}

// Collect implements prometheus.Collector.
func (c backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), BacklogScrapeTimeout)
	defer cancel()
	counts, err := c.count(ctx)
	failed := 0.0
	if err != nil {
		failed = 1
	}
	for what, n := range counts {
		ch <- prometheus.MustNewConstMetric(backlogSize, prometheus.GaugeValue, float64(n), what)
	}
	ch <- prometheus.MustNewConstMetric(backlogScrapeErr, prometheus.GaugeValue, failed)
}
