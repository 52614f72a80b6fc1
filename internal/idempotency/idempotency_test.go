package idempotency_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

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
	keys, _ := r.Client.Keys(ctx, "*").Result()
	for _, k := range keys {
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
