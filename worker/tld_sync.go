package worker

import (
	"context"
	"log/slog"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/tldsync"
)

// tldSync copies TLD prices and rules from the registry provider. Upserts
// make a repeated run harmless.
type tldSync struct {
	db       *gorm.DB
	registry registry.Provider
	log      *slog.Logger
}

func (h *tldSync) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	res, err := tldsync.Run(ctx, h.db, h.registry, h.log)
	if err != nil {
		return err
	}
	h.log.InfoContext(ctx, "TLDs synced", "synced", res.Synced, "failed", res.Failed, "unavailable", res.Unavailable)
	return nil
}
