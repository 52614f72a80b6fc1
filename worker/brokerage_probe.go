package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/brokerage"
	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/internal/siteprobe"
	"github.com/domaind/domaind/tasks"
)

// brokerageProbe looks at a domain's home page for the brokerage and
// records whether it runs an active site. The probe's fetches go through
// the SSRF-safe client; a site that does not answer is a verdict
// (unreachable, not active), so only a database that fails is retried.
type brokerageProbe struct {
	db    *gorm.DB
	fetch *fetch.Client
	log   *slog.Logger
	now   func() time.Time
}

func (h *brokerageProbe) Work(ctx context.Context, p tasks.BrokerageProbePayload) error {
	if p.Domain == "" {
		return fmt.Errorf("brokerage:probe without a domain: %w", asynq.SkipRetry)
	}
	r := siteprobe.Probe(ctx, h.fetch, p.Domain)
	r.Domain = p.Domain // the check's key, as the brokerage wrote it
	h.log.InfoContext(ctx, "brokerage site probe", "domain", r.Domain, "reason", r.Reason, "url", r.URL, "status", r.Status, "err", r.Err)
	return brokerage.RecordProbe(ctx, h.db, r, h.now())
}
