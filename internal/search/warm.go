package search

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/models"
)

// warmups runs the search's warm-ups: background WHOIS lookups of
// registered names that have no cached summary, so that the next search
// shows one. They run on a few goroutines the Service owns (Service.Close
// waits for them), never on a request's: a search hands its warm-ups over
// without waiting and its stream ends right after the done event, whatever
// the database or Redis are doing.
//
// Handing over is best effort. A warm-up that finds the queue full, or the
// Service closing, is dropped, and one still queued when the Service closes
// is dropped too: a lost warm-up costs only a WHOIS summary that a later
// search warms again (ARCHITECTURE.md keeps the outbox for tasks whose loss
// matters; a warm-up that runs still creates its lookup through it). The
// once-per-name-per-10-minutes claim (lookup.Cache.ClaimWarm) is taken when
// a warm-up runs, so a dropped one does not hold the name's claim.
type warmups struct {
	run   func(ctx context.Context, client, domain string)
	queue chan warmup
	// ctx ends when the warm-ups are closed, cancelling the running ones.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type warmup struct {
	ctx    context.Context // the search's, for its values (request id) only
	client string          // the searching client's rate-limit identity
	domain string
}

// Warm-up bounds: concurrent warm-ups, queued ones, and one warm-up's time.
const (
	warmWorkers = 4
	warmQueue   = 256
	warmTimeout = 2 * time.Second
)

// newWarmups starts the workers of warm-ups that call run for each domain
// handed over; close stops them.
func newWarmups(run func(ctx context.Context, client, domain string)) *warmups {
	ctx, cancel := context.WithCancel(context.Background())
	w := &warmups{run: run, queue: make(chan warmup, warmQueue), ctx: ctx, cancel: cancel}
	for range warmWorkers {
		w.wg.Go(w.work)
	}
	return w
}

// add hands a warm-up of domain, asked for by client, over without
// waiting, and reports whether it was queued. (One queued as close runs is
// dropped with the queue.)
func (w *warmups) add(ctx context.Context, client, domain string) bool {
	if w.ctx.Err() != nil {
		return false
	}
	select {
	case w.queue <- warmup{ctx: context.WithoutCancel(ctx), client: client, domain: domain}:
		return true
	default:
		return false
	}
}

func (w *warmups) work() {
	for {
		select {
		case <-w.ctx.Done():
			return
		case job := <-w.queue:
			if w.ctx.Err() != nil { // closed while both were ready: drop it
				return
			}
			ctx, cancel := context.WithTimeout(job.ctx, warmTimeout)
			stop := context.AfterFunc(w.ctx, cancel)
			w.run(ctx, job.client, job.domain)
			stop()
			cancel()
		}
	}
}

// close drops the queued warm-ups, cancels the running ones and waits for
// them to return. Later warm-ups are dropped.
func (w *warmups) close() {
	w.cancel()
	w.wg.Wait()
}

// Warm-ups send queries to registries that nobody asked for by name, so
// they have budgets of their own, apart from the WHOIS quota: per client
// address, and per TLD for all clients together (well under the worker's
// per-server budget, lookup.DefaultServerBudget, which people's own
// lookups share).
var (
	warmupClientLimit = ratelimit.PerHour("warmup-client", 100)
	warmupTLDLimit    = ratelimit.PerMinute("warmup-tld", 60)
)

// Warm is one warm-up: it starts a lookup of a registered domain
// unless another search claimed the name in the last ten minutes, or the
// client's or the TLD's warm-up budget is spent.
func (s *Service) Warm(ctx context.Context, client, domain string) {
	ok, err := s.d.Lookups.ClaimWarm(ctx, domain)
	if err == nil && ok {
		ok, err = s.spendWarmup(ctx, client, domain)
	}
	if err == nil && ok {
		err = s.d.Whois.Start(ctx, models.NewID(), domain, true)
	}
	if err != nil {
		s.d.Log.WarnContext(ctx, "background lookup not started", "domain", domain, "err", err)
	}
}

// spendWarmup spends a unit of the client's and of the TLD's warm-up
// budgets, or neither.
func (s *Service) spendWarmup(ctx context.Context, client, domain string) (bool, error) {
	byClient, err := s.d.Limiter.Allow(ctx, warmupClientLimit, client)
	if err != nil || !byClient.Allowed {
		return false, err
	}
	byTLD, err := s.d.Limiter.Allow(ctx, warmupTLDLimit, domain[strings.LastIndexByte(domain, '.')+1:])
	if err == nil && byTLD.Allowed {
		return true, nil
	}
	if rerr := s.d.Limiter.Refund(ctx, warmupClientLimit, client, byClient); rerr != nil {
		s.d.Log.WarnContext(ctx, "warm-up unit not given back", "err", rerr)
	}
	return false, err
}
