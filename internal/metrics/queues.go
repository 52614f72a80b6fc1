package metrics

import (
	"github.com/hibiken/asynq"
	asynqmetrics "github.com/hibiken/asynq/x/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// RegisterQueues registers the queue metrics read through inspector at
// scrape time: the service's domaind_queue_* (QueueCollector), and asynq's
// own exporter (asynq_queue_size, asynq_tasks_enqueued_total,
// asynq_tasks_processed_total, asynq_tasks_failed_total,
// asynq_queue_latency_seconds, …), which published asynq dashboards read.
func (m *Metrics) RegisterQueues(inspector *asynq.Inspector) {
	m.Registry.MustRegister(NewQueueCollector(inspector), asynqmetrics.NewQueueMetricsCollector(inspector))
}

// QueueCollector exports asynq queue health, read through an inspector when
// Prometheus scrapes: size by state, latency of the oldest pending task,
// processed and failed counts, and whether the queue is paused.
type QueueCollector struct {
	inspector *asynq.Inspector
}

// NewQueueCollector returns a collector reading through inspector.
func NewQueueCollector(inspector *asynq.Inspector) *QueueCollector {
	return &QueueCollector{inspector: inspector}
}

var (
	queueSize = prometheus.NewDesc("domaind_queue_tasks",
		"Tasks in the queue by state.", []string{"queue", "state"}, nil)
	queueLatency = prometheus.NewDesc("domaind_queue_latency_seconds",
		"Age of the oldest pending task in the queue.", []string{"queue"}, nil)
	queueProcessed = prometheus.NewDesc("domaind_queue_processed_total",
		"Tasks processed (succeeded or failed) by the queue since the Redis data began.", []string{"queue"}, nil)
	queueFailed = prometheus.NewDesc("domaind_queue_failed_total",
		"Task attempts that failed in the queue since the Redis data began.", []string{"queue"}, nil)
	queuePaused = prometheus.NewDesc("domaind_queue_paused",
		"1 when the queue is paused.", []string{"queue"}, nil)
	queueScrapeErr = prometheus.NewDesc("domaind_queue_scrape_error",
		"1 when the queue state could not be read from Redis.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c *QueueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{queueSize, queueLatency, queueProcessed, queueFailed, queuePaused, queueScrapeErr} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *QueueCollector) Collect(ch chan<- prometheus.Metric) {
	queues, err := c.inspector.Queues()
	failed := 0.0
	if err != nil {
		failed = 1
	}
	for _, q := range queues {
		info, err := c.inspector.GetQueueInfo(q)
		if err != nil {
			failed = 1
			continue
		}
		for state, n := range map[string]int{
			"pending": info.Pending, "active": info.Active, "scheduled": info.Scheduled,
			"retry": info.Retry, "archived": info.Archived, "completed": info.Completed,
		} {
			ch <- prometheus.MustNewConstMetric(queueSize, prometheus.GaugeValue, float64(n), q, state)
		}
		ch <- prometheus.MustNewConstMetric(queueLatency, prometheus.GaugeValue, info.Latency.Seconds(), q)
		ch <- prometheus.MustNewConstMetric(queueProcessed, prometheus.CounterValue, float64(info.ProcessedTotal), q)
		ch <- prometheus.MustNewConstMetric(queueFailed, prometheus.CounterValue, float64(info.FailedTotal), q)
		paused := 0.0
		if info.Paused {
			paused = 1
		}
		ch <- prometheus.MustNewConstMetric(queuePaused, prometheus.GaugeValue, paused, q)
	}
	ch <- prometheus.MustNewConstMetric(queueScrapeErr, prometheus.GaugeValue, failed)
}
