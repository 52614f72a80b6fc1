// Package catalog keeps the synced TLDs and their prices in memory for the
// read endpoints. The data changes only when the TLD sync runs (every few
// hours), while pricing, metadata and every search row read it, so a
// snapshot a few seconds old is served instead of a query per request.
package catalog

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/models"
)

// Snapshot is the catalog at one moment. It is never modified.
type Snapshot struct {
	TLDs map[string]models.TLD
	// Prices maps TLD → op → cents (nil where the op is not offered).
	Prices map[string]map[string]*int64
	Loaded time.Time
}

// Price returns the price of op on tld, and whether the catalog has a row
// for it (a row can still hold a nil price).
func (s *Snapshot) Price(tld, op string) (*int64, bool) {
	p, ok := s.Prices[tld][op]
	return p, ok
}

// Catalog loads snapshots from the database at most once per TTL.
type Catalog struct {
	db  *gorm.DB
	ttl time.Duration

	snap atomic.Pointer[Snapshot]
	mu   sync.Mutex // serialises reloads
}

// New returns a Catalog on db whose snapshots live for ttl.
func New(db *gorm.DB, ttl time.Duration) *Catalog { return &Catalog{db: db, ttl: ttl} }

// Get returns a snapshot no older than the TTL, loading one if needed.
// Concurrent callers of an expired catalog wait for one reload.
func (c *Catalog) Get(ctx context.Context) (*Snapshot, error) {
	if s := c.snap.Load(); c.fresh(s) {
		return s, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.snap.Load(); c.fresh(s) { // another caller reloaded meanwhile
		return s, nil
	}
	snap, err := load(ctx, c.db)
	if err != nil {
		return nil, err
	}
	c.snap.Store(snap)
	return snap, nil
}

func (c *Catalog) fresh(s *Snapshot) bool { return s != nil && time.Since(s.Loaded) < c.ttl }

func load(ctx context.Context, db *gorm.DB) (*Snapshot, error) {
	db = db.WithContext(ctx)
	var tlds []models.TLD
	if err := db.Find(&tlds).Error; err != nil {
		return nil, fmt.Errorf("load TLD catalog: %w", err)
	}
	var prices []models.TLDPrice
	if err := db.Find(&prices).Error; err != nil {
		return nil, fmt.Errorf("load TLD prices: %w", err)
	}
	s := &Snapshot{TLDs: make(map[string]models.TLD, len(tlds)), Prices: make(map[string]map[string]*int64, len(tlds)), Loaded: time.Now()}
	for _, t := range tlds {
		s.TLDs[t.Name] = t
	}
	for _, p := range prices {
		if s.Prices[p.TLD] == nil {
			s.Prices[p.TLD] = map[string]*int64{}
		}
		s.Prices[p.TLD][p.Op] = p.Cents
	}
	return s, nil
}
