// Package settlement settles partner orders period by period, for finance.
//
// A run belongs to one period (a week by default, see package period) and is
// created once: Request, by the scheduler when a period has closed or by
// finance by hand, makes the period's run and its settlement:run task in
// one transaction, or returns the run that exists. The task settles every
// order that reached TRANSFER_COMPLETED before the period's end and is not
// settled yet, in committed batches (order.Service.SettleBatch), so a run
// killed half-way resumes where it stopped, and runs at once settle each
// order once.
//
// A statement is one partner's settled orders of one period in one
// environment and currency, summed from the ledger (package ledger): the
// gross of the sales, the refunds (negative), the partner's commission,
// what the partner owes for sales it collected, and what is owed to it
// for sales the service collected. Nothing of a statement is stored but
// the period its orders were settled in; a run that finishes opens the
// period's payouts (package payout).
package settlement

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/payout"
	"github.com/domaind/domaind/internal/period"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// Who asked for a run first.
const (
	TriggerSchedule = "schedule"
	TriggerOps      = "ops"
)

// Batch is how many orders one transaction of a run settles.
const Batch = 500

// Lanes is how many batches of a run are settled at once, each lane
// over its own range of the orders: two keep both of the reference
// machine's cores busy (Postgres writing one batch while this process
// builds the next); more add nothing there (9.1 s for 100,000 orders at
// three or four lanes, 9.7 s at two, 15.3 s at one).
const Lanes = 2

// Service runs settlements over one database.
type Service struct {
	db        *gorm.DB
	secretKey []byte // seals the statements' cursors
	outbox    *outbox.Outbox
	orders    *order.Service
	length    period.Length
	now       func() time.Time
}

// New returns a Service with periods of length, sealing its cursors with
// secretKey (DOMAIND_SECRET_KEY).
func New(db *gorm.DB, ob *outbox.Outbox, orders *order.Service, length period.Length, secretKey []byte, now func() time.Time) *Service {
	return &Service{db: db, outbox: ob, orders: orders, length: length, secretKey: secretKey, now: now}
}

// Request returns the run of the period starting at start, creating it
// with its task when there is none, or queueing a failed one again. A
// start that begins no period is a validation error; a period not closed
// yet is a conflict.
func (s *Service) Request(ctx context.Context, start time.Time, trigger string) (models.SettlementRun, error) {
	p, ok := s.length.Starting(start)
	if !ok {
		return models.SettlementRun{}, fault.Invalid("period_start", "is not the start of a %s period: the period around it starts at %s",
			s.length, p.Start.Format(time.RFC3339))
	}
	now := s.now().UTC()
	if p.End.After(now) {
		return models.SettlementRun{}, fault.New(fault.Conflict, "the period from %s has not closed yet: it ends at %s",
			p.Start.Format(time.RFC3339), p.End.Format(time.RFC3339))
	}
	var run models.SettlementRun
	err := s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		run = models.SettlementRun{ID: secret.NewID("stl_"), PeriodStart: p.Start, PeriodEnd: p.End, Status: models.RunQueued,
			Trigger: trigger, CreatedAt: now}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&run)
		if res.Error != nil {
			return fmt.Errorf("create the run of %s: %w", p.Start, res.Error)
		}
		if res.RowsAffected == 0 {
			run = models.SettlementRun{}
			if err := models.ForUpdate(tx.DB).Take(&run, "period_start = ?", p.Start).Error; err != nil {
				return fmt.Errorf("find the run of %s: %w", p.Start, err)
			}
			if run.Status != models.RunFailed {
				return nil
			}
			run.Status, run.Error = models.RunQueued, ""
			if err := tx.Model(&run).Select("status", "error").Updates(&run).Error; err != nil {
				return fmt.Errorf("queue run %s again: %w", run.ID, err)
			}
		}
		tx.Add(tasks.SettlementRunPayload{RunID: run.ID})
		return nil
	})
	return run, err
}

// RequestClosed requests, for the scheduler, the run of the period that
// had closed last at slot, the start of the scheduler's slot: a task run
// late, once the next period has closed too, still asks for its own.
func (s *Service) RequestClosed(ctx context.Context, slot time.Time) (models.SettlementRun, error) {
	return s.Request(ctx, s.length.Closed(slot).Start, TriggerSchedule)
}

// Closed returns the period that closed last, the one a run is asked for
// unless someone says otherwise.
func (s *Service) Closed() period.Period {
	return s.length.Closed(s.now())
}

// Open returns the period now running, whose orders a run settles once
// it has closed.
func (s *Service) Open() period.Period {
	return s.length.Of(s.now())
}

// Run carries run id out: it settles the period's orders batch by batch,
// Lanes batches at once over ranges of the orders of about the same size,
// and marks the run done. Run again (a retry, a second delivery of the
// task) it picks up where it stopped; a done run is left alone.
func (s *Service) Run(ctx context.Context, id string) error {
	db := s.db.WithContext(ctx)
	var run models.SettlementRun
	if err := db.Take(&run, "id = ?", id).Error; err != nil {
		return fmt.Errorf("find settlement run %s: %w", id, err)
	}
	if run.Status == models.RunDone {
		return nil
	}
	now := s.now().UTC()
	if err := db.Model(&run).Where("status <> ?", models.RunDone).
		Updates(map[string]any{"status": models.RunRunning, "started_at": gorm.Expr("COALESCE(started_at, ?)", now)}).Error; err != nil {
		return fmt.Errorf("start settlement run %s: %w", id, err)
	}
	lanes, err := s.orders.SplitUnsettled(ctx, run.PeriodEnd, Lanes)
	if err != nil {
		return fmt.Errorf("settlement run %s: %w", id, err)
	}
	for {
		// Each lane settles the orders of its range, batch by batch.
		g, gctx := errgroup.WithContext(ctx)
		for _, r := range lanes {
			g.Go(func() error {
				for {
					n, last, err := s.orders.SettleBatch(gctx, run.PeriodStart, run.PeriodEnd, r, Batch)
					if err != nil || n == 0 {
						return err
					}
					r.After = last
				}
			})
		}
		if err := g.Wait(); err != nil {
			return fmt.Errorf("settlement run %s: %w", id, err)
		}
		// The end of the orders may only mean that a run at once held some
		// of them: done is when nothing is left, else start over.
		lanes = []order.IDRange{{}}
		left, err := s.orders.Unsettled(ctx, run.PeriodEnd)
		if err != nil {
			return fmt.Errorf("settlement run %s: %w", id, err)
		}
		if left == 0 {
			break
		}
	}
	now = s.now().UTC()
	return db.Transaction(func(tx *gorm.DB) error {
		if err := payout.Open(tx, period.Period{Start: run.PeriodStart, End: run.PeriodEnd}, now); err != nil {
			return fmt.Errorf("settlement run %s: %w", id, err)
		}
		return tx.Model(&run).Updates(map[string]any{"status": models.RunDone, "error": "", "finished_at": now}).Error
	})
}

// Fail marks run id failed with why: its task gave up.
func (s *Service) Fail(ctx context.Context, id string, why error) error {
	return s.db.WithContext(ctx).Model(&models.SettlementRun{ID: id}).Where("status <> ?", models.RunDone).
		Updates(map[string]any{"status": models.RunFailed, "error": models.ErrorText(why, 500)}).Error
}

// Get returns run id, or not_found.
func (s *Service) Get(ctx context.Context, id string) (models.SettlementRun, error) {
	var run models.SettlementRun
	err := s.db.WithContext(ctx).Take(&run, "id = ?", id).Error
	return run, models.Found(err, "settlement run "+id)
}

// MaxRuns is how many runs Runs lists.
const MaxRuns = 100

// Runs returns the newest runs, by period.
func (s *Service) Runs(ctx context.Context) ([]models.SettlementRun, error) {
	var runs []models.SettlementRun
	if err := s.db.WithContext(ctx).Order("period_start DESC").Limit(MaxRuns).Find(&runs).Error; err != nil {
		return nil, fmt.Errorf("list settlement runs: %w", err)
	}
	return runs, nil
}
