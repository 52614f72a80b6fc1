package models

import (
	"context"
	"fmt"
	"log/slog"

	"gorm.io/gorm"
)

// seeder fills one part of the demo data. Seeders run in order and each
// skips work already done, so seeding twice changes nothing.
type seeder struct {
	Name string
	Run  func(ctx context.Context, db *gorm.DB) (rows int, err error)
}

// seeders is the demo data of the embedded mode, in dependency order. Each
// capability adds its own.
var seeders []seeder

// Seed runs every seeder and logs what each added.
func Seed(ctx context.Context, db *gorm.DB, log *slog.Logger) error {
	for _, s := range seeders {
		n, err := s.Run(ctx, db.WithContext(ctx))
		if err != nil {
			return fmt.Errorf("seed %s: %w", s.Name, err)
		}
		log.InfoContext(ctx, "seeded", "what", s.Name, "rows", n)
	}
	return nil
}
