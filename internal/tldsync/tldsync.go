// Package tldsync copies TLD prices and rules from the registry provider into
// the database, where the pricing and metadata endpoints read them. It runs
// as a periodic task and once on `domaind seed`.
package tldsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/models"
)

// parallel bounds concurrent TLD info requests to the provider.
const parallel = 4

// Result says what a sync did.
type Result struct {
	Synced      int // TLDs whose rules and prices were stored
	Failed      int // TLDs the provider lists but whose rules could not be read
	Unavailable int // TLDs stored before that the provider no longer lists
}

// Run syncs every TLD the provider lists. A TLD whose rules cannot be read
// keeps its previous row and sync time, so it turns stale after a day rather
// than vanishing; only when the provider cannot list its TLDs or prices at
// all does Run fail.
func Run(ctx context.Context, db *gorm.DB, p registry.Provider, log *slog.Logger) (Result, error) {
	var res Result
	tlds, err := p.TLDs(ctx)
	if err != nil {
		return res, fmt.Errorf("list TLDs: %w", err)
	}
	prices, err := p.Prices(ctx)
	if err != nil {
		return res, fmt.Errorf("price list: %w", err)
	}
	byTLD := map[string]map[string]int64{}
	for _, pr := range prices {
		if byTLD[pr.TLD] == nil {
			byTLD[pr.TLD] = map[string]int64{}
		}
		byTLD[pr.TLD][pr.Op] = pr.Cents
	}

	infos := make([]registry.TLDInfo, len(tlds))
	errs := make([]error, len(tlds))
	var g errgroup.Group
	g.SetLimit(parallel)
	for i, tld := range tlds {
		g.Go(func() error {
			infos[i], errs[i] = p.TLDInfo(ctx, tld)
			return nil
		})
	}
	g.Wait()

	now := time.Now().UTC()
	db = db.WithContext(ctx)
	for i, tld := range tlds {
		if errs[i] != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			res.Failed++
			log.WarnContext(ctx, "TLD sync failed for one TLD", "tld", tld, "err", errs[i])
			continue
		}
		if err := store(db, p.Name(), tld, infos[i], byTLD[tld], now); err != nil {
			return res, fmt.Errorf("store %s: %w", tld, err)
		}
		res.Synced++
	}
	if len(tlds) > 0 {
		gone := db.Model(&models.TLD{}).Where("name NOT IN ? AND unavailable = ?", tlds, false).Update("unavailable", true)
		if gone.Error != nil {
			return res, fmt.Errorf("mark unavailable TLDs: %w", gone.Error)
		}
		res.Unavailable = int(gone.RowsAffected)
	}
	if res.Synced == 0 && res.Failed > 0 {
		return res, errors.Join(fmt.Errorf("no TLD could be synced"), errs[0])
	}
	return res, nil
}

// store upserts one TLD (its rules as SPEC §2.8 metadata, and its label
// syntax) and its four prices in one transaction.
func store(db *gorm.DB, source, tld string, info registry.TLDInfo, prices map[string]int64, now time.Time) error {
	return db.Transaction(func(tx *gorm.DB) error {
		row := models.TLD{Name: tld, Source: source, Metadata: info.ToMetadata(), LastSyncedAt: now}
		if info.Metadata.DomainSyntax != nil {
			row.Syntax = *info.Metadata.DomainSyntax
		}
		err := tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "name"}},
			DoUpdates: clause.AssignmentColumns([]string{"source", "metadata", "syntax", "unavailable", "last_synced_at"}),
		}).Create(&row).Error
		if err != nil {
			return err
		}
		rows := make([]models.TLDPrice, 0, len(registry.Ops))
		for _, op := range registry.Ops {
			r := models.TLDPrice{TLD: tld, Op: op, Currency: "USD", SyncedAt: now}
			if c, ok := prices[op]; ok {
				r.Cents = &c
			}
			rows = append(rows, r)
		}
		return tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "tld"}, {Name: "op"}},
			DoUpdates: clause.AssignmentColumns([]string{"cents", "currency", "synced_at"}),
		}).Create(&rows).Error
	})
}
