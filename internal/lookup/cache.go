package lookup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/domaininfo"
)

// TTLs of cached answers. A registered name's data changes rarely; a name
// without data may be registered any minute.
const (
	FoundTTL    = time.Hour
	NotFoundTTL = 10 * time.Minute
	// warmClaimTTL is how long one background warm-up of a domain blocks the next.
	warmClaimTTL = 10 * time.Minute
)

// Answer is a finished lookup as cached and announced.
type Answer struct {
	LookupID  string            `json:"lookup_id"`
	Domain    string            `json:"domain"`
	Found     bool              `json:"found"`
	Record    domaininfo.Record `json:"record"`
	CreatedAt time.Time         `json:"created_at"`
}

// Cache is the Redis side of lookups: the cached answers, and the
// announcements of lookups' ends, which the process's waiters share one
// subscription to (ends.go). Close it when done.
type Cache struct {
	rdb  redis.UniversalClient
	ends ends
}

// NewCache returns a Cache on rdb; log tells when the subscription to the
// ends of lookups fails and is made again.
func NewCache(rdb redis.UniversalClient, log *slog.Logger) *Cache {
	c := &Cache{rdb: rdb}
	c.ends.init(log)
	return c
}

func answerKey(domain string) string { return "lookup:answer:" + domain }
func doneChannel(id string) string   { return "lookup:done:" + id }
func warmKey(domain string) string   { return "lookup:warming:" + domain }

// Get returns the cached answer for domain; ok is false on a miss.
func (c *Cache) Get(ctx context.Context, domain string) (a Answer, ok bool, err error) {
	b, err := c.rdb.Get(ctx, answerKey(domain)).Bytes()
	if errors.Is(err, redis.Nil) {
		return a, false, nil
	}
	if err != nil {
		return a, false, fmt.Errorf("lookup cache get %s: %w", domain, err)
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return a, false, nil // an entry from another version: a miss
	}
	return a, true, nil
}

// GetMany returns the cached answers of the domains that have one. The
// reads go in one pipeline of GETs, not an MGET: on a Redis Cluster the
// domains' keys lie in many slots, which one command may not span, and the
// cluster client splits a pipeline by node.
func (c *Cache) GetMany(ctx context.Context, domains []string) (map[string]Answer, error) {
	if len(domains) == 0 {
		return nil, nil
	}
	pipe := c.rdb.Pipeline()
	gets := make([]*redis.StringCmd, len(domains))
	for i, d := range domains {
		gets[i] = pipe.Get(ctx, answerKey(d))
	}
	pipe.Exec(ctx) // each GET's own error is read below
	out := make(map[string]Answer, len(domains))
	for i, get := range gets {
		b, err := get.Bytes()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("lookup cache get many: %w", err)
		}
		var a Answer
		if json.Unmarshal(b, &a) == nil {
			out[domains[i]] = a
		}
	}
	return out, nil
}

// Finish caches a and announces it to whoever waits on its lookup.
func (c *Cache) Finish(ctx context.Context, a Answer) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	ttl := FoundTTL
	if !a.Found {
		ttl = NotFoundTTL
	}
	pipe := c.rdb.Pipeline()
	pipe.Set(ctx, answerKey(a.Domain), b, ttl)
	pipe.Publish(ctx, doneChannel(a.LookupID), "done")
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("lookup cache finish %s: %w", a.Domain, err)
	}
	return nil
}

// Announce tells waiters that lookup id ended without an answer to cache
// (it failed for good).
func (c *Cache) Announce(ctx context.Context, id string) error {
	return c.rdb.Publish(ctx, doneChannel(id), "done").Err()
}

// ClaimWarm reports whether the caller may start a background lookup of
// domain: the first caller in warmClaimTTL wins.
func (c *Cache) ClaimWarm(ctx context.Context, domain string) (bool, error) {
	ok, err := c.rdb.SetNX(ctx, warmKey(domain), 1, warmClaimTTL).Result()
	if err != nil {
		return false, fmt.Errorf("lookup warm claim %s: %w", domain, err)
	}
	return ok, nil
}
