package console

import (
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/tasks"
)

// opsIndexData is what the ops index shows.
type opsIndexData struct {
	Title, Error string
	Monitoring   bool
	Queues       []opsQueueRow
}

// opsQueueRow is one queue's health at a glance.
type opsQueueRow struct {
	Name                                                           string
	Pending, Active, Scheduled, Retry, Archived, Processed, Failed int
	Latency                                                        string
	Paused                                                         bool
}

// opsIndex answers GET /ops: the ops pages, and each queue's health from
// asynq (its tasks by state, how long the oldest pending one has waited,
// today's done and failed counts), with the queue dashboard's link where
// this process serves it. A Redis that cannot answer leaves the table
// empty with the reason; the links still work.
func (con *Console) opsIndex(c *gin.Context) {
	view := opsIndexData{Title: "Operations", Monitoring: con.monitoring}
	status := http.StatusOK
	var err error
	if view.Queues, err = con.queueRows(); err != nil {
		con.log.WarnContext(c.Request.Context(), "ops index: queues unreadable", "err", err)
		status, view.Error = http.StatusServiceUnavailable, "The queues cannot be read from Redis right now: "+err.Error()
	}
	con.render(c, status, "ops_index.html", view)
}

// queueRows reads the health of every queue the service uses, and of any
// other Redis holds, by name; a queue that has had no task yet (Redis
// knows it only once it has) is a row of zeros.
func (con *Console) queueRows() ([]opsQueueRow, error) {
	known, err := con.inspector.Queues()
	if err != nil {
		return nil, err
	}
	queues := slices.Sorted(maps.Keys(tasks.QueueWeights))
	for _, q := range known {
		if _, ok := tasks.QueueWeights[q]; !ok {
			queues = append(queues, q)
		}
	}
	slices.Sort(queues)
	rows := make([]opsQueueRow, 0, len(queues))
	for _, q := range queues {
		if !slices.Contains(known, q) {
			rows = append(rows, opsQueueRow{Name: q, Latency: "0s"})
			continue
		}
		info, err := con.inspector.GetQueueInfo(q)
		if err != nil {
			return nil, err
		}
		rows = append(rows, opsQueueRow{Name: q, Pending: info.Pending, Active: info.Active, Scheduled: info.Scheduled,
			Retry: info.Retry, Archived: info.Archived, Processed: info.Processed, Failed: info.Failed,
			Latency: info.Latency.Truncate(time.Second).String(), Paused: info.Paused})
	}
	return rows, nil
}
