// Package knownaddr remembers the client addresses each partner credential
// authenticated from, so that the lockout of a key id whose failed
// signatures ran out spares the partner's own servers. Anyone who knows a
// key id can spend its failures, but not from the partner's address: this
// is OWASP's device cookie for servers, which keep their addresses.
package knownaddr

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// TTL is how long an address stays known after it last authenticated.
const TTL = 30 * 24 * time.Hour

// PerKey bounds the addresses a key id keeps: those that authenticated
// last. A partner's servers are a handful of addresses.
const PerKey = 64

// rewriteAfter is how long a process lets an address it recorded age in
// Redis before it records the address again: a request writes nothing to
// Redis, but the first of an address in rewriteAfter.
const rewriteAfter = 10 * time.Minute

// Book remembers, in Redis, the addresses each key id authenticated from.
type Book struct {
	rdb redis.UniversalClient
	now func() time.Time

	mu       sync.Mutex
	written  map[string]time.Time // key id and address → when this process last recorded them
	forgetAt time.Time            // when written is next swept
}

// New returns a Book in rdb with the clock now.
func New(rdb redis.UniversalClient, now func() time.Time) *Book {
	return &Book{rdb: rdb, now: now, written: map[string]time.Time{}}
}

// Remember records that keyID authenticated from address now. Within
// rewriteAfter of recording a pair, a process does not write it again.
// "unknown" (no address could be read) is never recorded.
func (b *Book) Remember(ctx context.Context, keyID, address string) error {
	if address == "" || address == "unknown" {
		return nil
	}
	now := b.now()
	pair := keyID + " " + address
	if !b.due(pair, now) {
		return nil
	}
	key := redisKey(keyID)
	_, err := b.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, key, redis.Z{Score: float64(now.Unix()), Member: address})
		p.ZRemRangeByScore(ctx, key, "-inf", strconv.FormatInt(now.Add(-TTL).Unix(), 10))
		p.ZRemRangeByRank(ctx, key, 0, -PerKey-1)
		p.Expire(ctx, key, TTL)
		return nil
	})
	if err != nil {
		b.mu.Lock()
		delete(b.written, pair) // the next request tries again
		b.mu.Unlock()
		return fmt.Errorf("remember the address of %s: %w", keyID, err)
	}
	return nil
}

// due reports whether pair is to be recorded now, and if so marks it
// recorded. It forgets, every rewriteAfter, the pairs recorded longer ago.
func (b *Book) due(pair string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !now.Before(b.forgetAt) {
		for p, at := range b.written {
			if now.Sub(at) >= rewriteAfter {
				delete(b.written, p)
			}
		}
		b.forgetAt = now.Add(rewriteAfter)
	}
	if at, ok := b.written[pair]; ok && now.Sub(at) < rewriteAfter {
		return false
	}
	b.written[pair] = now
	return true
}

// Known reports whether keyID authenticated from address in the last TTL.
func (b *Book) Known(ctx context.Context, keyID, address string) (bool, error) {
	if address == "" || address == "unknown" {
		return false, nil
	}
	at, err := b.rdb.ZScore(ctx, redisKey(keyID), address).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up the addresses of %s: %w", keyID, err)
	}
	return b.now().Sub(time.Unix(int64(at), 0)) < TTL, nil
}

// redisKey is the sorted set of keyID's addresses, scored by when each
// last authenticated (Unix seconds).
func redisKey(keyID string) string { return "partner-addresses:" + keyID }
