// Package idempotency stores the responses of requests sent with an
// Idempotency-Key, so a retry gets the first answer instead of a second
// execution. Records live in Redis for 24 hours, scoped per caller, and
// sealed: a stored answer may carry a secret shown once (a new developer
// key's), which Redis must not hold in the clear.
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

	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/secret"
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
	// Limit is the rate limit the answer reported, so a replay can report
	// its current state instead.
	Limit *ratelimit.Policy `json:"limit,omitempty"`
}

// Store keeps records in Redis.
type Store struct {
	rdb  redis.UniversalClient
	seal *secret.Sealer
}

// New returns a store on rdb sealing records with seal.
func New(rdb redis.UniversalClient, seal *secret.Sealer) *Store { return &Store{rdb: rdb, seal: seal} }

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
	running := s.encode(Record{Running: true, Fingerprint: fp})
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
		if prior, err = s.decode(b); err != nil {
			return Record{}, false, err
		}
		return prior, false, nil
	}
	return Record{}, false, errors.New("idempotency claim: key keeps changing")
}

// Complete stores the response of a claimed key for TTL.
func (s *Store) Complete(ctx context.Context, scope, key string, r Record) error {
	return s.rdb.Set(ctx, redisKey(scope, key), s.encode(r), TTL).Err()
}

func (s *Store) encode(r Record) []byte {
	b, _ := json.Marshal(r) // headers, bytes and numbers always marshal
	return s.seal.Seal(b)
}

func (s *Store) decode(b []byte) (Record, error) {
	var r Record
	plain, err := s.seal.Open(b)
	if err == nil {
		err = json.Unmarshal(plain, &r)
	}
	if err != nil {
		return Record{}, fmt.Errorf("idempotency decode: %w", err)
	}
	return r, nil
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
