// Package inventory is what partners can sell, by environment: the live
// marketplace's approved, visible listings for live credentials, and the
// synthetic sandbox listings for sandbox credentials, never one for the
// other. It finds a listed name and searches names by words and meaning
// (internal/namesearch) over an in-memory index of each environment,
// rebuilt from the database when it is older than IndexTTL.
package inventory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/namesearch"
	"github.com/domaind/domaind/models"
)

// IndexTTL is how old an environment's search index may get before it is
// built again from the database. Listings added and removed reach every
// process's index at once (Share); the rebuild catches what a process
// missed, such as changes made while its subscription was down.
const IndexTTL = 5 * time.Minute

// Item is a listed name, in either environment. Prices are cents.
type Item struct {
	ID          string
	Domain      string
	TLD         string
	BINCents    *int64
	FloorCents  *int64
	Currency    string
	LockedUntil *time.Time
	CreatedAt   time.Time
}

// Available reports whether the name can be bought at now (not held by a
// sale in progress).
func (it Item) Available(now time.Time) bool {
	return it.LockedUntil == nil || !it.LockedUntil.After(now)
}

// Hit is a search result: the item and its relevance (higher is better;
// it means nothing across searches).
type Hit struct {
	Item
	Score float64
}

// Service is the inventories of one database.
type Service struct {
	db *gorm.DB
	// secretKey seals the cursors of List.
	secretKey []byte
	now       func() time.Time

	mu      sync.Mutex
	indexes map[string]*builtIndex
	// pending are the changes of each environment applied while its index
	// is being built, applied again to the new one; absent when no build
	// runs.
	pending map[string][]change
	builds  singleflight.Group
	// rebuilds are the background rebuilds and the subscription to other
	// processes' changes, waited for by Close.
	rebuilds sync.WaitGroup
	// share publishes this service's changes (Share); nil keeps them here.
	share redis.UniversalClient
	log   *slog.Logger
	stop  func() // ends the subscription
	// afterLoad, in tests, runs between a build's read of the database and
	// the new index's use.
	afterLoad func()
}

type builtIndex struct {
	ix         *namesearch.Index
	built      time.Time
	rebuilding bool
}

// New returns the inventories of db, sealing its cursors with secretKey
// (DOMAIND_SECRET_KEY); now is its clock.
func New(db *gorm.DB, secretKey []byte, now func() time.Time) *Service {
	return &Service{db: db, secretKey: secretKey, now: now, indexes: map[string]*builtIndex{}, pending: map[string][]change{}, stop: func() {}}
}

// table is the query of env's listings for sale (a sold one is gone until
// a refund puts it back).
func (s *Service) table(ctx context.Context, env string) (*gorm.DB, error) {
	db := s.db.WithContext(ctx)
	switch env {
	case models.EnvLive:
		return db.Scopes(models.PublicListings), nil // a sold listing is hidden
	case models.EnvSandbox:
		return db.Model(&models.SandboxListing{}).Where("sold_at IS NULL"), nil
	}
	return nil, fmt.Errorf("inventory: unknown environment %q", env)
}

// row is the columns both tables share.
type row struct {
	ID          string
	Domain      string
	TLD         string
	BINCents    *int64
	FloorCents  *int64
	Currency    string
	LockedUntil *time.Time
	CreatedAt   time.Time
}

func (r row) item() Item { return Item(r) }

// Find returns the listed name in env, or a not_found error.
func (s *Service) Find(ctx context.Context, env, domain string) (Item, error) {
	name, err := parseDomain(domain)
	if err != nil {
		return Item{}, err
	}
	q, err := s.table(ctx, env)
	if err != nil {
		return Item{}, err
	}
	var r row
	err = q.Where("domain = ?", name.Registrable).Take(&r).Error
	if err := models.FoundOr(err, name.Registrable, "%s is not listed", name.Registrable); err != nil {
		return Item{}, err
	}
	return r.item(), nil
}

// parseDomain reads the domain parameter, a validation error naming it.
func parseDomain(domain string) (domainname.Name, error) {
	name, err := domainname.Parse(domain)
	if err != nil {
		return name, fault.InvalidErr("domain", err)
	}
	return name, nil
}

// MaxResults is the most a partner search answers (SPEC §4.2: no bulk export).
const MaxResults = 5

// Search returns up to MaxResults listings of env that match q by words
// or meaning, best first.
func (s *Service) Search(ctx context.Context, env, q string) ([]Hit, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return nil, fault.Invalid("q", "is required: words or a name to search for")
	}
	if len(q) > namesearch.MaxQueryBytes {
		return nil, fault.Invalid("q", "is longer than %d bytes", namesearch.MaxQueryBytes)
	}
	ix, err := s.index(ctx, env)
	if err != nil {
		return nil, err
	}
	// The index holds every listing; those not for sale now (sold, or held
	// back from the marketplace) are left out below, so it asks for more.
	found := ix.Search(q, 4*MaxResults)
	if len(found) == 0 {
		return []Hit{}, nil
	}
	ids := make([]string, len(found))
	for i, h := range found {
		ids[i] = h.ID
	}
	tq, err := s.table(ctx, env)
	if err != nil {
		return nil, err
	}
	var rows []row
	if err := tq.Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("load search hits: %w", err)
	}
	byID := map[string]row{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	hits := make([]Hit, 0, MaxResults)
	for _, h := range found {
		if r, ok := byID[h.ID]; ok && len(hits) < MaxResults {
			hits = append(hits, Hit{Item: r.item(), Score: h.Score})
		}
	}
	return hits, nil
}

// index returns env's search index, building it when there is none, and
// rebuilding it in the background (serving the old one meanwhile) when it
// is older than IndexTTL.
func (s *Service) index(ctx context.Context, env string) (*namesearch.Index, error) {
	s.mu.Lock()
	b := s.indexes[env]
	stale := b != nil && !b.rebuilding && s.now().Sub(b.built) > IndexTTL
	if stale {
		b.rebuilding = true
	}
	s.mu.Unlock()
	if b == nil {
		return s.build(ctx, env)
	}
	if stale {
		s.rebuilds.Go(func() {
			if _, err := s.build(context.WithoutCancel(ctx), env); err != nil {
				s.mu.Lock()
				b.rebuilding = false // the old index serves on; the next search tries again
				s.mu.Unlock()
			}
		})
	}
	return b.ix, nil
}

// build builds env's index from the database, once at a time: every
// listing, for sale or not (Search reads which are). The changes applied
// while it reads are applied to the new index too before it serves.
func (s *Service) build(ctx context.Context, env string) (*namesearch.Index, error) {
	v, err, _ := s.builds.Do(env, func() (any, error) {
		model, err := listingModel(env)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.pending[env] = []change{}
		s.mu.Unlock()
		var entries []namesearch.Entry
		if err := s.db.WithContext(ctx).Model(model).Select("id", "domain").Order("id").Find(&entries).Error; err != nil {
			s.mu.Lock()
			delete(s.pending, env)
			s.mu.Unlock()
			return nil, fmt.Errorf("load the %s inventory: %w", env, err)
		}
		if s.afterLoad != nil {
			s.afterLoad()
		}
		b := &builtIndex{ix: namesearch.New(entries), built: s.now()}
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.pending[env] {
			c.applyTo(b.ix)
		}
		delete(s.pending, env)
		s.indexes[env] = b
		return b.ix, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*namesearch.Index), nil
}

// Add lists domain in env at the given prices (ops load inventory this
// way); a live listing is approved and visible in the marketplace.
func (s *Service) Add(ctx context.Context, env, domain string, binCents, floorCents *int64) (Item, error) {
	name, err := parseDomain(domain)
	if err != nil {
		return Item{}, err
	}
	if !name.IsRegistrable() {
		return Item{}, fault.Invalid("domain", "must be a registrable name such as %s", name.Registrable)
	}
	if err := checkPrices(binCents, floorCents); err != nil {
		return Item{}, err
	}
	now := s.now().UTC()
	it := Item{ID: models.NewID(), Domain: name.ASCII, TLD: name.TLD, BINCents: binCents, FloorCents: floorCents, Currency: "USD", CreatedAt: now}
	db := s.db.WithContext(ctx)
	switch env {
	case models.EnvLive:
		err = db.Create(&models.Listing{ID: it.ID, Domain: it.Domain, TLD: it.TLD, BINCents: binCents, FloorCents: floorCents,
			Currency: it.Currency, Approved: true, MarketplaceVisible: true, CreatedAt: now}).Error
	case models.EnvSandbox:
		err = db.Create(&models.SandboxListing{ID: it.ID, Domain: it.Domain, TLD: it.TLD, BINCents: binCents, FloorCents: floorCents,
			Currency: it.Currency, CreatedAt: now}).Error
	default:
		return Item{}, fault.Invalid("environment", "must be sandbox or live")
	}
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return Item{}, fault.New(fault.Conflict, "%s is listed already in %s", it.Domain, env)
	}
	if err != nil {
		return Item{}, fmt.Errorf("list %s: %w", it.Domain, err)
	}
	s.changed(ctx, change{Env: env, ID: it.ID, Domain: it.Domain})
	return it, nil
}

// Remove takes listing id out of env's inventory; a sold or unknown one is
// not_found. A sold listing stays: its order names it, and a refund or a
// cancellation puts it back on sale (removed, the name could be listed
// and sold again).
func (s *Service) Remove(ctx context.Context, env, id string) error {
	model, err := listingModel(env)
	if err != nil {
		return err
	}
	res := s.db.WithContext(ctx).Where("id = ? AND sold_at IS NULL", id).Delete(model)
	if res.Error != nil {
		return fmt.Errorf("remove listing %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return fault.New(fault.NotFound, "no unsold %s listing %s", env, id)
	}
	s.changed(ctx, change{Env: env, ID: id, Removed: true})
	return nil
}

// listingModel is the table of env's listings.
func listingModel(env string) (any, error) {
	switch env {
	case models.EnvLive:
		return &models.Listing{}, nil
	case models.EnvSandbox:
		return &models.SandboxListing{}, nil
	}
	return nil, fault.Invalid("environment", "must be sandbox or live")
}

// Close stops the subscription to other processes' changes and waits for
// the background rebuilds of the indexes.
func (s *Service) Close() {
	s.stop()
	s.rebuilds.Wait()
}
