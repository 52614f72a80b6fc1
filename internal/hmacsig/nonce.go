package hmacsig

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// NonceTTL is how long a nonce is remembered: twice MaxSkew, the whole time
// a request carrying it can pass the timestamp check (its timestamp may be
// up to MaxSkew behind or ahead of the server's clock).
const NonceTTL = 2 * MaxSkew

// maxNonceLen bounds a nonce; a UUID is 36 characters.
const maxNonceLen = 128

// NonceStore remembers the nonces each credential has used, so a signed
// request cannot be sent twice.
type NonceStore struct {
	rdb redis.UniversalClient
	ttl time.Duration
}

// NewNonceStore returns a store in rdb remembering each nonce for ttl. Pass
// NonceTTL: a shorter ttl lets a request be replayed once its nonce is
// forgotten but its timestamp still passes.
func NewNonceStore(rdb redis.UniversalClient, ttl time.Duration) *NonceStore {
	return &NonceStore{rdb: rdb, ttl: ttl}
}

// Claim records that keyID used nonce and reports whether it had not used it
// in the last ttl. It is one atomic SET NX EX, so of any number of concurrent
// requests with one nonce exactly one is fresh. Check the signature first, so
// that a forged request cannot spend a nonce. A nonce must be 1 to 128
// printable ASCII characters other than space (a UUID v4 is recommended);
// another is refused with an error wrapping ErrBadNonce. On any error the
// request must be refused.
func (s *NonceStore) Claim(ctx context.Context, keyID, nonce string) (fresh bool, err error) {
	if err := checkNonce(nonce); err != nil {
		return false, err
	}
	fresh, err = s.rdb.SetNX(ctx, nonceKey(keyID, nonce), time.Now().Unix(), s.ttl).Result()
	if err != nil {
		return false, fmt.Errorf("claim nonce: %w", err)
	}
	return fresh, nil
}

// nonceKey is the Redis key of one credential's nonce. The nonce is hashed so
// the key's length is bounded and the last ":" always ends the key id.
func nonceKey(keyID, nonce string) string {
	sum := sha256.Sum256([]byte(nonce))
	return "nonce:" + keyID + ":" + hex.EncodeToString(sum[:])
}

func checkNonce(nonce string) error {
	if nonce == "" {
		return fmt.Errorf("%w: empty; send a fresh UUID v4 with every request", ErrBadNonce)
	}
	if len(nonce) > maxNonceLen {
		return fmt.Errorf("%w: %d characters, at most %d allowed", ErrBadNonce, len(nonce), maxNonceLen)
	}
	for i := range len(nonce) {
		if c := nonce[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("%w: byte %d (0x%02x) is not printable ASCII", ErrBadNonce, i, c)
		}
	}
	return nil
}
