package idempotency_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/idempotency"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/secret"
)

func TestBeginCompleteReplay(t *testing.T) {
	r := platformtest.NewRedis(t)
	s := newStore(r)
	ctx := context.Background()
	fp := idempotency.Fingerprint("POST", "/api/x", []byte(`{"a":1}`))

	_, claimed, err := s.Begin(ctx, "client-a", "k1", fp)
	if err != nil || !claimed {
		t.Fatalf("first Begin = %v, %v; want claimed", claimed, err)
	}
	prior, claimed, err := s.Begin(ctx, "client-a", "k1", fp)
	if err != nil || claimed || !prior.Running {
		t.Fatalf("Begin while running = %+v, %v, %v; want the running record", prior, claimed, err)
	}
	rec := idempotency.Record{Fingerprint: fp, Status: 201, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"ok":true,"secret":"dks_shown-once"}`)}
	if err := s.Complete(ctx, "client-a", "k1", rec); err != nil {
		t.Fatal(err)
	}
	for _, k := range r.Keys(t, "*") {
		if v, _ := r.Client.Get(ctx, k).Result(); strings.Contains(v, "dks_shown-once") || strings.Contains(v, "application/json") {
			t.Errorf("Redis holds a stored answer in the clear under %s", k)
		}
	}
	prior, claimed, err = s.Begin(ctx, "client-a", "k1", fp)
	if err != nil || claimed || prior.Running || prior.Status != 201 || string(prior.Body) != string(rec.Body) || prior.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("Begin after Complete = %+v, %v, %v; want the stored response", prior, claimed, err)
	}
	// The same key from another client is another key.
	if _, claimed, _ := s.Begin(ctx, "client-b", "k1", fp); !claimed {
		t.Errorf("another client's key was not free")
	}
}

func newStore(r *platformtest.Redis) *idempotency.Store {
	return idempotency.New(r.Client, secret.NewSealer([]byte("test-secret-key-0123456789abcdef"), "idempotency"))
}

func TestReleaseFreesTheKey(t *testing.T) {
	s := newStore(platformtest.NewRedis(t))
	ctx := context.Background()
	s.Begin(ctx, "c", "k", "fp")
	if err := s.Release(ctx, "c", "k"); err != nil {
		t.Fatal(err)
	}
	if _, claimed, err := s.Begin(ctx, "c", "k", "fp2"); err != nil || !claimed {
		t.Errorf("Begin after Release = %v, %v; want claimed", claimed, err)
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
	r := platformtest.NewRedis(t)
	s := newStore(r)
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
