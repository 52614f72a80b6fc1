package metrics_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/domaind/domaind/internal/metrics"
)

// The backlog's counts are read at each scrape; a count that fails says
// so and exports no figure, which would read as nothing waiting.
func TestBacklogIsCountedAtEachScrape(t *testing.T) {
	t.Parallel()
	var counts map[string]int64
	var fail error
	m := metrics.New()
	m.RegisterBacklog(func(ctx context.Context) (map[string]int64, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the backlog is counted without a deadline")
		}
		return counts, fail
	})
	counts = map[string]int64{"transfer_unconfirmed": 2, "card_refund_failed": 0}
	want := `
# HELP domaind_ops_backlog Work waiting for ops by kind: transfers the registry left unconfirmed, card refunds that failed, returns given up.
# TYPE domaind_ops_backlog gauge
domaind_ops_backlog{what="card_refund_failed"} 0
domaind_ops_backlog{what="transfer_unconfirmed"} 2
# HELP domaind_ops_backlog_scrape_error 1 when the work waiting for ops could not be counted from the database.
# TYPE domaind_ops_backlog_scrape_error gauge
domaind_ops_backlog_scrape_error 0
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "domaind_ops_backlog", "domaind_ops_backlog_scrape_error"); err != nil {
		t.Error(err)
	}
	counts, fail = nil, errors.New("the database is down")
	want = `
# HELP domaind_ops_backlog_scrape_error 1 when the work waiting for ops could not be counted from the database.
# TYPE domaind_ops_backlog_scrape_error gauge
domaind_ops_backlog_scrape_error 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "domaind_ops_backlog", "domaind_ops_backlog_scrape_error"); err != nil {
		t.Error(err)
	}
}
