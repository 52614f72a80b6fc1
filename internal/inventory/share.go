package inventory

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/namesearch"
	"github.com/domaind/domaind/internal/pubsub"
)

// Changes is the Redis channel on which the services of every process tell
// each other the listings they added and removed.
const Changes = "inventory:changes"

// change is a listing added to or removed from an environment's inventory.
type change struct {
	Env     string `json:"env"`
	ID      string `json:"id"`
	Domain  string `json:"domain,omitempty"`
	Removed bool   `json:"removed,omitempty"`
}

// applyTo makes the change in ix (both ways idempotent).
func (c change) applyTo(ix *namesearch.Index) {
	if c.Removed {
		ix.Remove(c.ID)
		return
	}
	ix.Add(namesearch.Entry{ID: c.ID, Domain: c.Domain})
}

// apply makes c in this process's index of its environment, and keeps it
// for the index being built, if one is.
func (s *Service) apply(c change) {
	s.mu.Lock()
	b := s.indexes[c.Env]
	if p, building := s.pending[c.Env]; building {
		s.pending[c.Env] = append(p, c)
	}
	s.mu.Unlock()
	if b != nil {
		c.applyTo(b.ix)
	}
}

// changed applies c here and tells the other processes of it. One that is
// not told (Redis is down) finds the change at its index's next rebuild.
func (s *Service) changed(ctx context.Context, c change) {
	s.apply(c)
	if s.share == nil {
		return
	}
	b, _ := json.Marshal(c) // strings and a bool always marshal
	if err := s.share.Publish(context.WithoutCancel(ctx), Changes, b).Err(); err != nil {
		s.log.WarnContext(ctx, "telling other processes of a listing change failed; their next index rebuild will find it",
			"env", c.Env, "id", c.ID, "err", err)
	}
}

// Share makes s tell the services of other processes (the other API
// replicas) through rdb of the listings it adds and removes, and apply
// theirs: a listing shows in partner search on every replica within
// milliseconds. Whenever the subscription (re)starts, changes may have
// been missed, so the indexes built so far are rebuilt. Close ends it.
func (s *Service) Share(rdb redis.UniversalClient, log *slog.Logger) {
	s.share, s.log = rdb, log
	s.stop = pubsub.Go(&s.rebuilds, func(ctx context.Context) *redis.PubSub { return rdb.Subscribe(ctx, Changes) }, pubsub.Handler{
		Subscribed: s.expire,
		Message: func(m *redis.Message) {
			var c change
			if err := json.Unmarshal([]byte(m.Payload), &c); err != nil {
				log.Warn("inventory changes: a message that is not a change", "err", err)
				return
			}
			s.apply(c)
		},
		Failed: func(err error) { log.Warn("inventory changes: subscription failed; retrying", "err", err) },
	})
}

// expire makes every index built so far stale, for its next search to
// rebuild it in the background (serving it meanwhile).
func (s *Service) expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.indexes {
		b.built = time.Time{}
	}
}
