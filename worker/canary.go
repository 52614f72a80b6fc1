package worker

import (
	"context"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/canary"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// canaryRun runs an ops canary (canary.Service.Run).
type canaryRun struct {
	db       *gorm.DB
	canaries *canary.Service
}

func (h *canaryRun) Work(ctx context.Context, p tasks.CanaryRunPayload) error {
	c, err := loadRow[models.Canary](h.db.WithContext(ctx), "canary", p.CanaryID)
	if err != nil {
		return err
	}
	return h.canaries.Run(ctx, c)
}
