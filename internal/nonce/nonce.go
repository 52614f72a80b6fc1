// Package nonce remembers the nonces of signed partner requests (SPEC
// §5.5), so that a request cannot be sent twice: one atomic Redis SET NX
// per credential and nonce, kept TTL.
package nonce

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/hmacsig"
)

// TTL is how long a nonce is remembered: longer than any time a request
// carrying it can pass the timestamp check. Its timestamp may be up to
// hmacsig.MaxSkew behind or ahead of the server's clock, inclusive and in
// whole seconds, so a request first seen at its earliest passes until a
// second past 2 × MaxSkew later; a nonce kept exactly 2 × MaxSkew could be
// replayed in that last second.
const TTL = 2*hmacsig.MaxSkew + 2*time.Second

// maxLen bounds a nonce; a UUID is 36 characters.
const maxLen = 128

// Store remembers the nonces each credential has used, so a signed
// request cannot be sent twice.
type Store struct {
	rdb redis.UniversalClient
	ttl time.Duration
}

// NewStore returns a store in rdb remembering each nonce for ttl. Pass
// TTL: a shorter ttl lets a request be replayed once its nonce is
// forgotten but its timestamp still passes.
func NewStore(rdb redis.UniversalClient, ttl time.Duration) *Store {
	return &Store{rdb: rdb, ttl: ttl}
}

// Claim records that keyID used nonce and reports whether it had not used it
// in the last ttl. It is one atomic SET NX EX, so of any number of concurrent
// requests with one nonce exactly one is fresh. Check the signature first, so
// that a forged request cannot spend a nonce. A nonce must be 1 to 128
// printable ASCII characters other than space (a UUID v4 is recommended);
// another is refused with an error wrapping hmacsig.ErrBadNonce. On any error the
// request must be refused.
func (s *Store) Claim(ctx context.Context, keyID, nonce string) (fresh bool, err error) {
	if err := check(nonce); err != nil {
		return false, err
	}
	fresh, err = s.rdb.SetNX(ctx, redisKey(keyID, nonce), time.Now().Unix(), s.ttl).Result()
	if err != nil {
		return false, fmt.Errorf("claim nonce: %w", err)
	}
	return fresh, nil
}

// redisKey is the Redis key of one credential's nonce. The nonce is hashed so
// the key's length is bounded and the last ":" always ends the key id.
func redisKey(keyID, nonce string) string {
	sum := sha256.Sum256([]byte(nonce))
	return "nonce:" + keyID + ":" + hex.EncodeToString(sum[:])
}

func check(nonce string) error {
	if nonce == "" {
		return fmt.Errorf("%w: empty; send a fresh UUID v4 with every request", hmacsig.ErrBadNonce)
	}
	if len(nonce) > maxLen {
		return fmt.Errorf("%w: %d characters, at most %d allowed", hmacsig.ErrBadNonce, len(nonce), maxLen)
	}
	for i := range len(nonce) {
		if c := nonce[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("%w: byte %d (0x%02x) is not printable ASCII", hmacsig.ErrBadNonce, i, c)
		}
	}
	return nil
}
