package lookup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/requestid"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// Wait is how long a caller waits for its lookup's task. A lookup still
// running then goes on in the background and fills the cache.
const Wait = 15 * time.Second

// Queue runs lookups on the worker's rdap queue for the API: a lookup row
// and its task written through the outbox, its end announced through the
// Cache.
type Queue struct {
	db     *gorm.DB
	outbox *outbox.Outbox
	cache  *Cache
}

// NewQueue returns the lookups of db, queued through ob and announced on
// cache.
func NewQueue(db *gorm.DB, ob *outbox.Outbox, cache *Cache) *Queue {
	return &Queue{db: db, outbox: ob, cache: cache}
}

// LookUp returns the registration record of domain (a registrable name):
// the cached answer of the last hour, or a new lookup run on the rdap
// queue and waited for (Wait at most: lookup_failed after, the lookup
// going on); not_found when neither RDAP nor the WHOIS fallback has data.
// failed says a lookup ran and failed on our side or the registries'
// (the caller's quota unit may go back).
func (q *Queue) LookUp(ctx context.Context, domain string) (a Answer, failed bool, err error) {
	a, ok, err := q.cache.Get(ctx, domain)
	if err != nil {
		return a, false, err
	}
	if !ok {
		if a, err = q.run(ctx, domain); err != nil {
			return a, true, err
		}
	}
	if !a.Found {
		return a, false, fault.New(fault.NotFound, "neither RDAP nor the WHOIS fallback has data for %s", a.Domain)
	}
	return a, false, nil
}

// run creates a lookup and its task and waits for the worker to finish it.
func (q *Queue) run(ctx context.Context, domain string) (Answer, error) {
	id := models.NewID()
	sub, err := q.cache.Subscribe(ctx, id)
	if err != nil {
		return Answer{}, err
	}
	defer sub.Close()
	if err := q.Start(ctx, id, domain, false); err != nil {
		return Answer{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, Wait)
	defer cancel()
	for {
		if err := sub.Wait(wctx, time.Second); err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				return Answer{}, fault.New(fault.LookupFailed,
					"the lookup of %s is taking longer than %s; it goes on in the background, retry in a minute", domain, ratelimit.DescribeDuration(Wait))
			}
			return Answer{}, err
		}
		var l models.Lookup
		if err := models.Found(q.db.WithContext(ctx).Take(&l, "id = ?", id).Error, "lookup "+id); err != nil {
			return Answer{}, err
		}
		switch l.State {
		case models.LookupPending:
			continue
		case models.LookupFailed:
			return Answer{}, fault.New(fault.LookupFailed,
				"WHOIS data for %s is unavailable: RDAP and the WHOIS fallback both failed; retry later", domain)
		}
		return Answer{LookupID: l.ID, Domain: l.Domain, Found: l.State == models.LookupDone,
			Record: l.Record, CreatedAt: l.CreatedAt.UTC()}, nil
	}
}

// Start writes a pending lookup id of domain and its task in one
// transaction. A search's warm-up starts one in the background, without
// waiting for it (tasks.LookupRunPayload.Background).
func (q *Queue) Start(ctx context.Context, id, domain string, background bool) error {
	err := q.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		if err := tx.Create(&models.Lookup{ID: id, Domain: domain, State: models.LookupPending, RequestID: requestid.From(ctx)}).Error; err != nil {
			return err
		}
		tx.Add(tasks.LookupRunPayload{LookupID: id, Background: background})
		return nil
	})
	if err != nil {
		return fmt.Errorf("queue the lookup of %s: %w", domain, err)
	}
	return nil
}
