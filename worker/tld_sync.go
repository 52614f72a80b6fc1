package worker

import (
	"context"
	"log/slog"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/tldsync"
	"github.com/domaind/domaind/tasks"
)

// tldSync copies TLD prices and rules from the registry provider. Upserts
// make a repeated run harmless.
type tldSync struct {
	db       *gorm.DB
	registry registry.Provider
	log      *slog.Logger
}

func (h *tldSync) Work(ctx context.Context, _ tasks.TLDSyncPayload) error {
	res, err := tldsync.Run(ctx, h.db, h.registry, h.log)
	if err != nil {
		return err
	}
	h.log.InfoContext(ctx, "TLDs synced", "synced", res.Synced, "failed", res.Failed, "unavailable", res.Unavailable)
	return nil
}
