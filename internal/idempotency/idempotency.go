// Package idempotency stores the responses of requests sent with an
// Idempotency-Key, so a retry gets the first answer instead of a second
// execution. Records live for 24 hours, scoped per caller, and sealed: a
// stored answer may carry a secret shown once (a new developer key's),
// which neither Redis nor the database may hold in the clear. A partner's
// records (PartnerScope) are kept in the database, where orders and
// refunds are, so that a Redis that lost its data cannot make a retried
// sale or refund run twice; everyone else's are kept in Redis.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
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
	Running bool `json:"running,omitempty"`
	// CarriedOut says the request made its change (CarriedOut): while it
	// is still Running, its answer is not stored yet, or was lost.
	CarriedOut  bool        `json:"carried_out,omitempty"`
	Fingerprint string      `json:"fp"`
	Status      int         `json:"status,omitempty"`
	Header      http.Header `json:"header,omitempty"`
	Body        []byte      `json:"body,omitempty"`
	// Limit is the rate limit the answer reported, so a replay can report
	// its current state instead.
	Limit *ratelimit.Policy `json:"limit,omitempty"`
}

// Store keeps records in Redis, and partners' in the database.
type Store struct {
	rdb     redis.UniversalClient
	keys    keyStore // Redis's
	durable keyStore // the database's (table, mirrored in Redis)
	table   tableKeys
	seal    *secret.Sealer
	// Now is the clock of the budgets' hours and of the database's expiry.
	Now func() time.Time
}

// New returns a store on rdb and db sealing records with seal.
func New(rdb redis.UniversalClient, db *gorm.DB, seal *secret.Sealer) *Store {
	s := &Store{rdb: rdb, keys: redisKeys{rdb}, seal: seal, Now: time.Now}
	s.table = tableKeys{db: db, now: func() time.Time { return s.Now() }}
	s.durable = mirrored{table: s.table, redis: s.keys}
	return s
}

// claimCtxKey holds the claim a request's context carries (Claimed).
type claimCtxKey struct{}

type claim struct {
	s    *Store
	k    string
	fp   string
	at   time.Time    // when Begin claimed it, or a moment after
	lost *atomic.Bool // CarriedOut found it taken over
}

// Claimed returns ctx carrying the claim of scope's key, made by Begin for
// a request with fingerprint fp just before, so that the transaction
// making the request's change can mark it (CarriedOut). Only claims kept
// in the database are carried: a record in Redis cannot commit with the
// change.
func (s *Store) Claimed(ctx context.Context, scope, key, fp string) context.Context {
	if !strings.HasPrefix(scope, partnerPrefix) {
		return ctx
	}
	return context.WithValue(ctx, claimCtxKey{}, claim{s: s, k: recordKey(scope, key), fp: fp, at: s.Now(), lost: new(atomic.Bool)})
}

// CarriedOut marks, in tx, the Idempotency-Key claim ctx carries as
// carried out; tx is the transaction making the change the request asked
// for (a refund, an order), so the mark commits with it. A key so marked
// is held for TTL even when its answer is never stored (the process died
// between the commit and Complete), and Release leaves it: a retry is
// told the change was made instead of making it again. A request marks
// its claim once. One that ran past its claim's hold (lockTTL), when a
// retry may have taken the key over, gets a conflict instead, which
// rolls its change back, and the key is no longer its own (Lost).
// Without a claim in ctx it does nothing.
func CarriedOut(ctx context.Context, tx *gorm.DB) error {
	c, ok := ctx.Value(claimCtxKey{}).(claim)
	if !ok {
		return nil
	}
	v := c.s.encode(Record{Running: true, CarriedOut: true, Fingerprint: c.fp})
	// A takeover comes once this claim has expired and holds the key a
	// full lockTTL from then, so its expiry is at least lockTTL past this
	// claim's; the minute spares clocks that differ a little.
	held, err := c.s.table.markCarriedOut(tx, c.k, v, c.at.Add(lockTTL+time.Minute))
	if err != nil || held {
		return err
	}
	c.lost.Store(true)
	return fault.New(fault.Conflict, "this request ran longer than its Idempotency-Key is held (%s), and a retry may have taken the key: nothing was changed", lockTTL)
}

// Lost reports whether the claim ctx carries was found taken over by
// CarriedOut: the key is no longer its request's to complete or release.
func Lost(ctx context.Context) bool {
	c, ok := ctx.Value(claimCtxKey{}).(claim)
	return ok && c.lost.Load()
}

// mirrored keeps partners' records in the table and, as the versions
// before it kept them, in Redis too: while processes of both run (a
// rolling deploy) and for a TTL after the last old one stopped, a key
// claimed by either is held for both. Redis is asked first, so a record
// an old process stored is replayed; the table answers when Redis lost
// its data. Once no record in Redis is younger than the first deploy of
// this version by a TTL, the mirror can go.
type mirrored struct{ table, redis keyStore }

func (m mirrored) claim(ctx context.Context, k string, v []byte, ttl time.Duration) (bool, []byte, error) {
	claimed, prior, err := m.redis.claim(ctx, k, v, ttl)
	if err != nil || !claimed {
		return false, prior, err
	}
	if claimed, prior, err = m.table.claim(ctx, k, v, ttl); err != nil || !claimed {
		// The table holds it (Redis lost the record): Redis's claim goes.
		return false, prior, errors.Join(err, m.redis.del(ctx, k))
	}
	return true, nil, nil
}

func (m mirrored) get(ctx context.Context, k string) ([]byte, bool, error) {
	if v, found, err := m.redis.get(ctx, k); err != nil || found {
		return v, found, err
	}
	return m.table.get(ctx, k)
}

func (m mirrored) set(ctx context.Context, k string, v []byte, ttl time.Duration) error {
	return errors.Join(m.table.set(ctx, k, v, ttl), m.redis.set(ctx, k, v, ttl))
}

func (m mirrored) del(ctx context.Context, k string) error {
	return errors.Join(m.table.del(ctx, k), m.redis.del(ctx, k))
}

// PartnerScope is the scope of the keys of the partner credential keyID,
// whose records the Store keeps in the database.
func PartnerScope(keyID string) string { return partnerPrefix + keyID }

const partnerPrefix = "partner:"

// keyStore is where a Store keeps the records of one kind of scope, each
// under its key k, as sealed bytes that expire after a while.
type keyStore interface {
	// claim stores v under k for ttl unless a record is there; otherwise
	// it answers the record.
	claim(ctx context.Context, k string, v []byte, ttl time.Duration) (claimed bool, prior []byte, err error)
	// get answers the record under k, if one is there.
	get(ctx context.Context, k string) (v []byte, found bool, err error)
	set(ctx context.Context, k string, v []byte, ttl time.Duration) error
	del(ctx context.Context, k string) error
}

func (s *Store) storeOf(scope string) keyStore {
	if strings.HasPrefix(scope, partnerPrefix) {
		return s.durable
	}
	return s.keys
}

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
	claimed, b, err := s.storeOf(scope).claim(ctx, recordKey(scope, key), s.encode(Record{Running: true, Fingerprint: fp}), lockTTL)
	if err != nil || claimed {
		return Record{}, claimed, err
	}
	prior, err = s.decode(b)
	return prior, false, err
}

// Stored returns the record under scope's key, if one is there, without
// claiming the key: for a caller that holds a key of its own over the
// keys it reads (a batch over its operations').
func (s *Store) Stored(ctx context.Context, scope, key string) (r Record, found bool, err error) {
	b, found, err := s.storeOf(scope).get(ctx, recordKey(scope, key))
	if err != nil || !found {
		return Record{}, false, err
	}
	r, err = s.decode(b)
	return r, err == nil, err
}

// Complete stores the response of a claimed key for TTL.
func (s *Store) Complete(ctx context.Context, scope, key string, r Record) error {
	return s.storeOf(scope).set(ctx, recordKey(scope, key), s.encode(r), TTL)
}

// Budget bounds what the keys of callers nobody vouches for may store:
// anyone can send a fresh key with every request, and without a bound each
// would keep a whole answer in Redis for a day.
type Budget struct {
	// TTL is how long a stored answer is replayed.
	TTL time.Duration
	// MaxRecord is the most bytes one stored answer may take.
	MaxRecord int
	// PerHour is the most bytes one owner's answers may add in a clock hour.
	PerHour int64
}

// Anonymous is the budget of requests made without credentials, counted per
// client address: an hour of replays, answers up to 256 KiB (a full batch
// fits), 4 MiB an hour per address. An address thus holds at most about
// 8 MiB of answers (two hours' worth overlap), where a day's worth of
// searches and batches took hundreds of megabytes.
var Anonymous = Budget{TTL: time.Hour, MaxRecord: 256 << 10, PerHour: 4 << 20}

// ErrOverBudget is CompleteWithin's answer for a record it did not keep.
var ErrOverBudget = errors.New("idempotency: the answer is over the caller's storage budget")

// budgetScript adds ARGV[1] bytes to the hour's count KEYS[1] unless that
// would pass ARGV[2]; it answers 1 when added, 0 when refused.
var budgetScript = redis.NewScript(`
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if n == tonumber(ARGV[1]) then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
if n > tonumber(ARGV[2]) then
  redis.call('DECRBY', KEYS[1], ARGV[1])
  return 0
end
return 1`)

// CompleteWithin stores the response of a claimed key as Complete does, for
// b.TTL and counted against owner's budget b, in Redis (it is for the
// callers nobody vouches for, partners never). A record larger than
// b.MaxRecord, or one that would take owner past b.PerHour, is not stored:
// the key is released (a retry runs again) and the answer is ErrOverBudget.
func (s *Store) CompleteWithin(ctx context.Context, scope, key string, r Record, owner string, b Budget) error {
	v := s.encode(r)
	if len(v) > b.MaxRecord {
		return errors.Join(ErrOverBudget, s.Release(ctx, scope, key))
	}
	hour := s.Now().Unix() / 3600
	count := fmt.Sprintf("idem-bytes:%s:%d", owner, hour)
	ok, err := budgetScript.Run(ctx, s.rdb, []string{count}, len(v), b.PerHour, 2*3600).Int()
	if err != nil {
		return fmt.Errorf("idempotency budget: %w", err)
	}
	if ok == 0 {
		return errors.Join(ErrOverBudget, s.Release(ctx, scope, key))
	}
	return s.keys.set(ctx, recordKey(scope, key), v, b.TTL)
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
// failed in a way a retry may fix), unless its request made its change
// (CarriedOut).
func (s *Store) Release(ctx context.Context, scope, key string) error {
	return s.storeOf(scope).del(ctx, recordKey(scope, key))
}

func recordKey(scope, key string) string {
	sum := sha256.Sum256([]byte(key))
	return "idem:" + scope + ":" + hex.EncodeToString(sum[:16])
}

// redisKeys keeps records in Redis, each under its key with a TTL.
type redisKeys struct{ rdb redis.UniversalClient }

func (r redisKeys) claim(ctx context.Context, k string, v []byte, ttl time.Duration) (bool, []byte, error) {
	for range 3 {
		ok, err := r.rdb.SetNX(ctx, k, v, ttl).Result()
		if err != nil {
			return false, nil, fmt.Errorf("idempotency claim: %w", err)
		}
		if ok {
			return true, nil, nil
		}
		b, err := r.rdb.Get(ctx, k).Bytes()
		if errors.Is(err, redis.Nil) {
			continue // expired between the two calls; claim again
		}
		if err != nil {
			return false, nil, fmt.Errorf("idempotency read: %w", err)
		}
		return false, b, nil
	}
	return false, nil, errors.New("idempotency claim: key keeps changing")
}

func (r redisKeys) get(ctx context.Context, k string) ([]byte, bool, error) {
	b, err := r.rdb.Get(ctx, k).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("idempotency read: %w", err)
	}
	return b, true, nil
}

func (r redisKeys) set(ctx context.Context, k string, v []byte, ttl time.Duration) error {
	return r.rdb.Set(ctx, k, v, ttl).Err()
}

func (r redisKeys) del(ctx context.Context, k string) error { return r.rdb.Del(ctx, k).Err() }
