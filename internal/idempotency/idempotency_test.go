package idempotency_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/idempotency"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// Both kinds of scope, Redis's and a partner's in the database, claim a
// key once, answer the running record while it runs, replay the stored
// answer, sealed where it is kept, and keep one caller's keys from
// another's.
func TestBeginCompleteReplay(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	fp := idempotency.Fingerprint("POST", "/api/x", []byte(`{"a":1}`))
	for _, scope := range []string{"user:a", idempotency.PartnerScope("pk_a")} {
		_, claimed, err := w.s.Begin(ctx, scope, "k1", fp)
		if err != nil || !claimed {
			t.Fatalf("%s: first Begin = %v, %v; want claimed", scope, claimed, err)
		}
		prior, claimed, err := w.s.Begin(ctx, scope, "k1", fp)
		if err != nil || claimed || !prior.Running || prior.Fingerprint != fp {
			t.Fatalf("%s: Begin while running = %+v, %v, %v; want the running record", scope, prior, claimed, err)
		}
		rec := idempotency.Record{Fingerprint: fp, Status: 201, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"ok":true,"secret":"dks_shown-once"}`)}
		if err := w.s.Complete(ctx, scope, "k1", rec); err != nil {
			t.Fatal(err)
		}
		prior, claimed, err = w.s.Begin(ctx, scope, "k1", fp)
		if err != nil || claimed || prior.Running || prior.Status != 201 || string(prior.Body) != string(rec.Body) || prior.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: Begin after Complete = %+v, %v, %v; want the stored response", scope, prior, claimed, err)
		}
		if _, claimed, _ := w.s.Begin(ctx, scope+"-other", "k1", fp); !claimed {
			t.Errorf("%s: another caller's key was not free", scope)
		}
	}
	for _, k := range w.redis.Keys(t, "*") {
		if v, _ := w.redis.Client.Get(ctx, k).Result(); strings.Contains(v, "dks_shown-once") || strings.Contains(v, "application/json") {
			t.Errorf("Redis holds a stored answer in the clear under %s", k)
		}
	}
	var rows []models.IdempotencyRecord
	w.db.Find(&rows)
	if len(rows) != 2 { // the partner's key and the other partner's
		t.Errorf("the database holds %d records, want the two partners' keys", len(rows))
	}
	for _, r := range rows {
		if strings.Contains(string(r.Record), "dks_shown-once") || strings.Contains(string(r.Record), "application/json") {
			t.Errorf("the database holds a stored answer in the clear under %s", r.ID)
		}
	}
}

// Stored reads a key's record without claiming it, in both kinds of
// scope: nothing for a key never used, the answer once stored, and, for
// a partner's, from the database once Redis lost its copy.
func TestStoredReadsWithoutClaiming(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	for _, scope := range []string{"addr:192.0.2.1", idempotency.PartnerScope("pk_a")} {
		if _, found, err := w.s.Stored(ctx, scope, "k1"); err != nil || found {
			t.Fatalf("%s: Stored of an unused key = %v, %v; want nothing", scope, found, err)
		}
		if _, claimed, err := w.s.Begin(ctx, scope, "k1", "fp"); err != nil || !claimed {
			t.Fatalf("%s: the key was taken by the read (claimed %v, %v)", scope, claimed, err)
		}
		if err := w.s.Complete(ctx, scope, "k1", idempotency.Record{Fingerprint: "fp", Status: 200, Body: []byte(`{"n":1}`)}); err != nil {
			t.Fatal(err)
		}
		if r, found, err := w.s.Stored(ctx, scope, "k1"); err != nil || !found || r.Running || string(r.Body) != `{"n":1}` {
			t.Errorf("%s: Stored after Complete = %+v, %v, %v; want the answer", scope, r, found, err)
		}
	}
	w.redis.Flush(t)
	if r, found, err := w.s.Stored(ctx, idempotency.PartnerScope("pk_a"), "k1"); err != nil || !found || string(r.Body) != `{"n":1}` {
		t.Errorf("a partner's answer after Redis lost its data = %+v, %v, %v; want it from the database", r, found, err)
	}
}

// A partner's key outlives Redis: after a FLUSHALL its answer is still
// replayed, and a key still running is still held.
func TestAPartnersKeysSurviveRedisLosingItsData(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	scope := idempotency.PartnerScope("pk_a")
	w.s.Begin(ctx, scope, "refund-1", "fp")
	if err := w.s.Complete(ctx, scope, "refund-1", idempotency.Record{Fingerprint: "fp", Status: 201, Body: []byte(`{"id":"rfd_1"}`)}); err != nil {
		t.Fatal(err)
	}
	w.s.Begin(ctx, scope, "refund-2", "fp")
	w.redis.Flush(t)
	if prior, claimed, err := w.s.Begin(ctx, scope, "refund-1", "fp"); err != nil || claimed || string(prior.Body) != `{"id":"rfd_1"}` {
		t.Errorf("a completed key after Redis lost its data = %+v, claimed %v, %v; want its answer", prior, claimed, err)
	}
	if prior, claimed, err := w.s.Begin(ctx, scope, "refund-2", "fp"); err != nil || claimed || !prior.Running {
		t.Errorf("a running key after Redis lost its data = %+v, claimed %v, %v; want it held", prior, claimed, err)
	}
}

// A partner's claim whose request never ended (its process died) frees
// its key in the database after the claim's few minutes; a completed
// answer is replayed for a day, then the key is free. (Redis's copies
// expire on Redis's own clock: each look drops them first.)
func TestKeysFreeThemselvesWhenTheyExpire(t *testing.T) {
	t.Parallel()
	w, now := newClockedWorld(t)
	ctx := context.Background()
	scope := idempotency.PartnerScope("pk_a")
	w.s.Begin(ctx, scope, "died", "fp")
	w.s.Begin(ctx, scope, "done", "fp")
	w.s.Complete(ctx, scope, "done", idempotency.Record{Fingerprint: "fp", Status: 201})
	begin := func(key, fp string) (idempotency.Record, bool, error) {
		w.redis.Flush(t)
		return w.s.Begin(ctx, scope, key, fp)
	}

	*now = now.Add(4 * time.Minute)
	if _, claimed, _ := begin("died", "fp2"); claimed {
		t.Errorf("a running claim was taken over after 4 minutes")
	}
	*now = now.Add(2 * time.Minute)
	if _, claimed, err := begin("died", "fp2"); err != nil || !claimed {
		t.Errorf("a running claim 6 minutes old = %v, %v; want it taken over", claimed, err)
	}
	if prior, claimed, _ := begin("done", "fp"); claimed || prior.Status != 201 {
		t.Errorf("an answer 6 minutes old = %+v, claimed %v; want it replayed", prior, claimed)
	}
	*now = now.Add(idempotency.TTL)
	if _, claimed, err := begin("done", "fp"); err != nil || !claimed {
		t.Errorf("an answer a day old = %v, %v; want the key free", claimed, err)
	}
}

// A partner's claim marked carried out by the transaction that made its
// change holds its key for a day though its answer is never stored (the
// process died after the commit) and though the request asked for a
// release; a mark rolled back with its transaction holds nothing. Other
// scopes' claims, in Redis, carry no mark.
func TestAKeyWhoseChangeWasMadeIsHeldThoughItsAnswerWasLost(t *testing.T) {
	t.Parallel()
	w, now := newClockedWorld(t)
	ctx := context.Background()
	scope := idempotency.PartnerScope("pk_a")
	mark := func(key string, commit bool) {
		t.Helper()
		if _, claimed, err := w.s.Begin(ctx, scope, key, "fp"); err != nil || !claimed {
			t.Fatalf("Begin %s = %v, %v", key, claimed, err)
		}
		claim := w.s.Claimed(ctx, scope, key, "fp")
		rollback := errors.New("rolled back")
		err := w.db.Transaction(func(tx *gorm.DB) error {
			if err := idempotency.CarriedOut(claim, tx); err != nil {
				return err
			}
			if !commit {
				return rollback
			}
			return nil
		})
		if err != nil && !errors.Is(err, rollback) {
			t.Fatalf("mark %s: %v", key, err)
		}
	}
	mark("lost", true)
	mark("released", true)
	if err := w.s.Release(ctx, scope, "released"); err != nil {
		t.Fatal(err)
	}
	mark("rolled-back", false)

	*now = now.Add(6 * time.Minute) // past a claim's hold
	w.redis.Flush(t)
	for _, key := range []string{"lost", "released"} {
		if prior, claimed, err := w.s.Begin(ctx, scope, key, "fp"); err != nil || claimed || !prior.Running || !prior.CarriedOut {
			t.Errorf("%s 6 minutes on = %+v, claimed %v, %v; want it held, carried out", key, prior, claimed, err)
		}
	}
	if _, claimed, err := w.s.Begin(ctx, scope, "rolled-back", "fp"); err != nil || !claimed {
		t.Errorf("a key whose mark was rolled back = claimed %v, %v; want it free after its hold", claimed, err)
	}
	if got := w.s.Claimed(ctx, "user:a", "k", "fp"); got != ctx {
		t.Errorf("a claim kept in Redis was carried in the context")
	}

	*now = now.Add(idempotency.TTL)
	if _, claimed, err := w.s.Begin(ctx, scope, "lost", "fp2"); err != nil || !claimed {
		t.Fatalf("a carried-out key a day old = %v, %v; want it free", claimed, err)
	}
	if err := w.s.Release(ctx, scope, "lost"); err != nil {
		t.Fatal(err)
	}
	if _, claimed, err := w.s.Begin(ctx, scope, "lost", "fp3"); err != nil || !claimed {
		t.Errorf("a key taken over after its day, then released = %v, %v; want it free (the mark went with the day)", claimed, err)
	}
}

// A request that ran past its claim's hold, whose key a retry took over,
// cannot mark the key: its change is refused and rolled back, the key is
// not its own any more, and the retry's claim is untouched and marks it.
func TestARequestWhoseKeyWasTakenOverCannotMarkIt(t *testing.T) {
	t.Parallel()
	w, now := newClockedWorld(t)
	ctx := context.Background()
	scope := idempotency.PartnerScope("pk_a")
	w.s.Begin(ctx, scope, "slow", "fp")
	slow := w.s.Claimed(ctx, scope, "slow", "fp")
	*now = now.Add(6 * time.Minute)
	w.redis.Flush(t) // Redis's copy has expired too
	if _, claimed, err := w.s.Begin(ctx, scope, "slow", "fp"); err != nil || !claimed {
		t.Fatalf("the retry's Begin = %v, %v; want the expired claim taken over", claimed, err)
	}
	retry := w.s.Claimed(ctx, scope, "slow", "fp")
	mark := func(claim context.Context) error {
		return w.db.Transaction(func(tx *gorm.DB) error { return idempotency.CarriedOut(claim, tx) })
	}
	var f *fault.Error
	if err := mark(slow); !errors.As(err, &f) || f.Code != fault.Conflict || !idempotency.Lost(slow) {
		t.Fatalf("the slow request's mark = %v (lost %v), want a conflict and the key lost", err, idempotency.Lost(slow))
	}
	var rows []models.IdempotencyRecord
	w.db.Find(&rows)
	if len(rows) != 1 || rows[0].CarriedOut || !rows[0].ExpiresAt.Equal(now.Add(5*time.Minute)) {
		t.Errorf("after the slow request's refused mark, the table holds %+v; want the retry's claim as it was", rows)
	}
	if err := mark(retry); err != nil || idempotency.Lost(retry) {
		t.Errorf("the retry's mark = %v (lost %v), want it made", err, idempotency.Lost(retry))
	}
}

// While processes of the version before run beside this one (a rolling
// deploy), a partner's key one of them answered or is running in Redis
// alone is held here too, and one claimed here is held for them in Redis.
func TestAPartnersKeysAreMirroredInRedisForTheVersionBefore(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	scope := idempotency.PartnerScope("pk_a")
	w.s.Begin(ctx, scope, "answered", "fp")
	w.s.Complete(ctx, scope, "answered", idempotency.Record{Fingerprint: "fp", Status: 201, Body: []byte(`{"id":"rfd_1"}`)})
	w.s.Begin(ctx, scope, "running", "fp")
	if n := len(w.redis.Keys(t, "idem:partner:*")); n != 2 {
		t.Errorf("%d of the partner's keys in Redis, want both held there for the version before", n)
	}
	w.db.Where("1 = 1").Delete(&models.IdempotencyRecord{}) // as the version before left them: in Redis alone
	if prior, claimed, err := w.s.Begin(ctx, scope, "answered", "fp"); err != nil || claimed || string(prior.Body) != `{"id":"rfd_1"}` {
		t.Errorf("a key answered in Redis alone = %+v, claimed %v, %v; want its answer", prior, claimed, err)
	}
	if prior, claimed, err := w.s.Begin(ctx, scope, "running", "fp"); err != nil || claimed || !prior.Running {
		t.Errorf("a key running in Redis alone = %+v, claimed %v, %v; want it held", prior, claimed, err)
	}
}

type world struct {
	s     *idempotency.Store
	db    *gorm.DB
	redis *platformtest.Redis
}

func newWorld(t *testing.T) *world {
	t.Helper()
	r, db := platformtest.NewRedis(t), modelstest.NewDB(t)
	return &world{s: newStore(r, db), db: db, redis: r}
}

// newClockedWorld is newWorld with the store's clock at *now, which the
// test moves. The clock is west of UTC, as a server's local time may be:
// SQLite compares times as text in the zone they were written in.
func newClockedWorld(t *testing.T) (*world, *time.Time) {
	t.Helper()
	w := newWorld(t)
	now := time.Date(2026, 11, 28, 5, 0, 0, 0, time.FixedZone("UTC-5", -5*60*60))
	w.s.Now = func() time.Time { return now }
	return w, &now
}

func newStore(r *platformtest.Redis, db *gorm.DB) *idempotency.Store {
	return idempotency.New(r.Client, db, secret.NewSealer([]byte("test-secret-key-0123456789abcdef"), "idempotency"))
}

func TestReleaseFreesTheKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	for _, scope := range []string{"c", idempotency.PartnerScope("pk_a")} {
		w.s.Begin(ctx, scope, "k", "fp")
		if err := w.s.Release(ctx, scope, "k"); err != nil {
			t.Fatal(err)
		}
		if _, claimed, err := w.s.Begin(ctx, scope, "k", "fp2"); err != nil || !claimed {
			t.Errorf("%s: Begin after Release = %v, %v; want claimed", scope, claimed, err)
		}
	}
}

func TestFingerprintCoversMethodPathAndBody(t *testing.T) {
	base := idempotency.Fingerprint("POST", "/a", []byte("x"))
	for name, other := range map[string]string{
		"method": idempotency.Fingerprint("PUT", "/a", []byte("x")),
		"path":   idempotency.Fingerprint("POST", "/b", []byte("x")),
		"body":   idempotency.Fingerprint("POST", "/a", []byte("y")),
	} {
		if other == base {
			t.Errorf("changing the %s kept the fingerprint", name)
		}
	}
	if base != idempotency.Fingerprint("POST", "/a", []byte("x")) {
		t.Errorf("fingerprint is not deterministic")
	}
}

// CompleteWithin keeps a record for the budget's TTL, refuses one larger
// than a record may be or one that would pass the owner's bytes for the
// hour, and frees the key of a refused one; owners and hours count apart.
func TestCompleteWithinKeepsToTheBudget(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	r, s := w.redis, w.s
	now := time.Date(2026, 11, 26, 10, 15, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	ctx := context.Background()
	answer := func(n int) idempotency.Record {
		return idempotency.Record{Fingerprint: "fp", Status: 200, Body: []byte(strings.Repeat("x", n))}
	}
	size := func(rec idempotency.Record) int { // what a record takes, sealed
		_, _, _ = s.Begin(ctx, "probe", "k", "fp")
		if err := s.Complete(ctx, "probe", "k", rec); err != nil {
			t.Fatal(err)
		}
		v, _ := r.Client.Get(ctx, idemKey(t, r, "probe")).Result()
		s.Release(ctx, "probe", "k")
		return len(v)
	}
	one := size(answer(1000))
	b := idempotency.Budget{TTL: time.Hour, MaxRecord: size(answer(2000)), PerHour: int64(2 * one)}
	complete := func(owner, key string, rec idempotency.Record) error {
		if _, claimed, err := s.Begin(ctx, "addr:"+owner, key, "fp"); err != nil || !claimed {
			t.Fatalf("Begin(%s, %s) = %v, %v; want claimed", owner, key, claimed, err)
		}
		return s.CompleteWithin(ctx, "addr:"+owner, key, rec, owner, b)
	}

	if err := complete("a", "big", answer(2100)); !errors.Is(err, idempotency.ErrOverBudget) {
		t.Fatalf("a record over MaxRecord = %v, want ErrOverBudget", err)
	}
	if _, claimed, _ := s.Begin(ctx, "addr:a", "big", "fp"); !claimed {
		t.Errorf("the key of a record not kept is still held")
	}
	for _, k := range []string{"k1", "k2"} {
		if err := complete("a", k, answer(1000)); err != nil {
			t.Fatalf("record %s within the budget: %v", k, err)
		}
	}
	if ttl := r.Client.TTL(ctx, idemKey(t, r, "addr:a")).Val(); ttl <= 0 || ttl > b.TTL {
		t.Errorf("a kept record lives %v, want at most %v", ttl, b.TTL)
	}
	if prior, claimed, _ := s.Begin(ctx, "addr:a", "k1", "fp"); claimed || prior.Status != 200 {
		t.Errorf("a kept record is not replayed: %+v, claimed %v", prior, claimed)
	}
	if err := complete("a", "k3", answer(1000)); !errors.Is(err, idempotency.ErrOverBudget) {
		t.Fatalf("a third record in the hour = %v, want ErrOverBudget", err)
	}
	if err := complete("b", "k3", answer(1000)); err != nil {
		t.Errorf("another owner's record = %v, want kept: owners count apart", err)
	}
	now = now.Add(time.Hour)
	if err := complete("a", "k4", answer(1000)); err != nil {
		t.Errorf("a record the next hour = %v, want kept", err)
	}
}

// idemKey is the one Redis key of a stored record of scope.
func idemKey(t *testing.T, r *platformtest.Redis, scope string) string {
	t.Helper()
	keys := r.Keys(t, "idem:"+scope+":*")
	if len(keys) == 0 {
		t.Fatalf("no record of %s in Redis", scope)
	}
	return keys[0]
}
