// Package idempotency stores the responses of requests sent with an
// Idempotency-Key, so a retry gets the first answer instead of a second
// execution. Records live in Redis for 24 hours, scoped per client.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"
)

// TTL is how long a completed response is replayed.
const TTL = 24 * time.Hour

// lockTTL bounds how long a request may hold its key while running; if its
// process dies, the key frees itself after this and a retry runs afresh.
const lockTTL = 5 * time.Minute

// Record is what is stored under a key.
type Record struct {
	Running     bool        `json:"running,omitempty"`
	Fingerprint string      `json:"fp"`
	Status      int         `json:"status,omitempty"`
	Header      http.Header `json:"header,omitempty"`
	Body        []byte      `json:"body,omitempty"`
}

// Store keeps records in Redis.
type Store struct{ rdb redis.UniversalClient }

// New returns a store on rdb.
func New(rdb redis.UniversalClient) *Store { return &Store{rdb: rdb} }

// Fingerprint identifies a request body for one method and path.
func Fingerprint(method, path string, body []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s\n", method, path)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Begin claims key for a request with fingerprint fp. It returns claimed ==
// true when the caller should run the request and then Complete or Release;
// otherwise prior is the record already there (running, or completed).
func (s *Store) Begin(ctx context.Context, scope, key, fp string) (prior Record, claimed bool, err error) {
	k := redisKey(scope, key)
	running, _ := json.Marshal(Record{Running: true, Fingerprint: fp})
	for range 3 {
		ok, err := s.rdb.SetNX(ctx, k, running, lockTTL).Result()
		if err != nil {
			return Record{}, false, fmt.Errorf("idempotency claim: %w", err)
		}
		if ok {
			return Record{}, true, nil
		}
		b, err := s.rdb.Get(ctx, k).Bytes()
		if errors.Is(err, redis.Nil) {
			continue // expired between the two calls; claim again
		}
		if err != nil {
			return Record{}, false, fmt.Errorf("idempotency read: %w", err)
		}
		if err := json.Unmarshal(b, &prior); err != nil {
			return Record{}, false, fmt.Errorf("idempotency decode: %w", err)
		}
		return prior, false, nil
	}
	return Record{}, false, errors.New("idempotency claim: key keeps changing")
}

// Complete stores the response of a claimed key for TTL.
func (s *Store) Complete(ctx context.Context, scope, key string, r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.rdb.Set(ctx, redisKey(scope, key), b, TTL).Err()
}

// Release frees a claimed key without storing a response (the request
// failed in a way a retry may fix).
func (s *Store) Release(ctx context.Context, scope, key string) error {
	return s.rdb.Del(ctx, redisKey(scope, key)).Err()
}

func redisKey(scope, key string) string {
	sum := sha256.Sum256([]byte(key))
	return "idem:" + scope + ":" + hex.EncodeToString(sum[:16])
}
