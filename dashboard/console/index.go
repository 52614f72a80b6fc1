package console

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/backlog"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// opsIndexData is what the ops index shows.
type opsIndexData struct {
	Title, Error, Done string
	Monitoring         bool
	// Backlog is the work waiting for ops, BacklogError why it could not
	// be read; Waiting counts it all (Backlog shows the oldest of each
	// kind, up to Limit), More says some is not shown.
	Backlog      []backlogRow
	BacklogError string
	Waiting      int64
	Limit        int
	More         bool
	Queues       []opsQueueRow
}

// backlogRow is an item of the backlog as a row of the index.
type backlogRow struct {
	backlog.Item
	What, Amount, Since string
	// Link is where its move is made, for a transfer (the order's row);
	// Form the path its paid-by-hand form posts to, for money; Retry the
	// path of a failed card refund's retry.
	Link, Form, Retry string
	// Unmatched warns of refunds the processor counts on the order's
	// charge that no refund sent explains ("" when none).
	Unmatched string
}

// backlogWhat names each kind of work (the page says what ops do).
var backlogWhat = map[backlog.Kind]string{
	backlog.TransferUnconfirmed: "transfer unconfirmed",
	backlog.CardRefundFailed:    "card refund failed",
	backlog.ReturnGivenUp:       "charge not given back",
}

// newBacklogRow writes it for people, with where its move is made.
func newBacklogRow(it backlog.Item) backlogRow {
	row := backlogRow{Item: it, What: backlogWhat[it.Kind], Amount: page.Money(it.Currency, it.AmountCents), Since: it.Since.Format(page.Time)}
	switch it.Kind {
	case backlog.TransferUnconfirmed:
		row.Amount = "the name" // no money: the buyer paid, and waits for the name
		row.Link = "/ops/orders?" + url.Values{"status": {models.OrderTransferInProgress}, "domain": {it.Domain}}.Encode()
	case backlog.CardRefundFailed:
		row.Form = "/ops/refunds/" + url.PathEscape(it.ID) + "/paid-by-hand"
		row.Retry = "/ops/refunds/" + url.PathEscape(it.ID) + "/retry"
		if it.UnmatchedRefundCents > 0 {
			row.Unmatched = page.Money(it.Currency, it.UnmatchedRefundCents)
		}
	case backlog.ReturnGivenUp:
		row.Form = "/ops/payments/" + url.PathEscape(it.ID) + "/paid-by-hand"
	}
	return row
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
	con.renderOpsIndex(c, http.StatusOK, "", con.notice(c))
}

// renderOpsIndex shows the index with status and a form's problem or
// notice: the work waiting for ops, its oldest BacklogLimit items of each
// kind with their moves, then the queues.
func (con *Console) renderOpsIndex(c *gin.Context, status int, problem, done string) {
	ctx := c.Request.Context()
	view := opsIndexData{Title: "Operations", Error: problem, Done: done, Monitoring: con.monitoring, Limit: BacklogLimit}
	counts, err := con.svc.Backlog.Counts(ctx)
	var items []backlog.Item
	if err == nil {
		items, err = con.svc.Backlog.List(ctx, BacklogLimit)
	}
	if err != nil {
		s, words := con.problem(c, err)
		status, view.BacklogError = max(status, s), words
	}
	for _, n := range counts {
		view.Waiting += n
	}
	view.More = view.Waiting > int64(len(items))
	for _, it := range items {
		view.Backlog = append(view.Backlog, newBacklogRow(it))
	}
	if view.Queues, err = con.queueRows(); err != nil {
		con.log.WarnContext(ctx, "ops index: queues unreadable", "err", err)
		status = max(status, http.StatusServiceUnavailable)
		if view.Error == "" {
			view.Error = "The queues cannot be read from Redis right now: " + err.Error()
		}
	}
	con.render(c, status, "ops_index.html", view)
}

// BacklogLimit is how many items of each kind of the backlog the index
// and GET /api/ops/backlog list, oldest first; the counts are of all.
const BacklogLimit = 100

// opsRefundByHandSubmit answers the index's form for a failed card
// refund as POST /api/ops/refunds/{id}/paid-by-hand does: back to the
// index (303) saying so, or the index with what went wrong.
func (con *Console) opsRefundByHandSubmit(c *gin.Context) {
	o, err := con.svc.Orders.RefundPaidByHand(c.Request.Context(), c.Param("id"), c.PostForm("reference"))
	if err != nil {
		status, problem := con.problem(c, err)
		con.renderOpsIndex(c, status, problem, "")
		return
	}
	con.done(c, "/ops", fmt.Sprintf("refund %s of %s (%s) recorded as paid back by hand, reference %s", c.Param("id"), o.PublicID, o.Domain,
		strings.TrimSpace(c.PostForm("reference"))))
}

// opsRefundRetrySubmit answers the index's retry button of a failed card
// refund as POST /api/ops/refunds/{id}/retry does.
func (con *Console) opsRefundRetrySubmit(c *gin.Context) {
	o, err := con.svc.Orders.RetryCardRefund(c.Request.Context(), c.Param("id"))
	if err != nil {
		status, problem := con.problem(c, err)
		con.renderOpsIndex(c, status, problem, "")
		return
	}
	con.done(c, "/ops", fmt.Sprintf("refund %s of %s (%s) asked of the card again", c.Param("id"), o.PublicID, o.Domain))
}

// opsPaymentByHandSubmit answers the index's form for a given-up return
// as POST /api/ops/payments/{id}/paid-by-hand does.
func (con *Console) opsPaymentByHandSubmit(c *gin.Context) {
	p, err := con.svc.Payments.PaidBackByHand(c.Request.Context(), c.Param("id"), c.PostForm("reference"))
	if err != nil {
		status, problem := con.problem(c, err)
		con.renderOpsIndex(c, status, problem, "")
		return
	}
	con.done(c, "/ops", fmt.Sprintf("payment %s (%s) recorded as paid back by hand, reference %s", p.ID, p.Domain, p.PaidByHandReference))
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
