package worker

import (
	"context"
	"log/slog"
	"net/http"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/rdap"
	"github.com/domaind/domaind/tasks"
)

// rdapBootstrapRefresh keeps the RDAP client's bootstrap current. A source
// that cannot be reached is retried; the bootstrap in use stays.
type rdapBootstrapRefresh struct {
	db     *gorm.DB
	hc     *http.Client
	source string
	client *rdap.Client
	log    *slog.Logger
}

func (h *rdapBootstrapRefresh) Work(ctx context.Context, _ tasks.RDAPBootstrapRefreshPayload) error {
	switched, err := lookup.RefreshBootstrap(ctx, h.db, h.hc, h.source, h.client)
	if err != nil {
		return err
	}
	h.log.InfoContext(ctx, "RDAP bootstrap checked", "source", h.source, "switched", switched,
		"publication", h.client.Bootstrap().Publication())
	return nil
}
