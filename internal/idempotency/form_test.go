package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/idempotency"
)

// made is what a form's work makes in these tests: a secret shown once.
type made struct {
	ID, Secret string
}

// A form's token runs its work once, however often and however fast the
// form is sent again: every send within a short while gets the first
// send's result, its secret included (a double click shows the second
// answer only), and later sends are refused. Another scope's token is its
// own.
func TestFormTokensRunOnce(t *testing.T) {
	t.Parallel()
	w, now := newClockedWorld(t)
	ctx := context.Background()
	token := idempotency.FormToken()
	if len(token) < 20 || token == idempotency.FormToken() {
		t.Fatalf("FormToken = %q, want a long random token", token)
	}

	var runs atomic.Int32
	work := func(context.Context) (made, error) {
		n := runs.Add(1)
		time.Sleep(20 * time.Millisecond) // the others come while it works
		return made{ID: "key_" + string(rune('0'+n)), Secret: "secret-of-the-first"}, nil
	}
	var wg sync.WaitGroup
	got := make([]made, 8)
	errs := make([]error, 8)
	for i := range got { // a button pressed eight times at once
		wg.Go(func() { got[i], errs[i] = idempotency.Once(ctx, w.s, "user:a", token, work) })
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i] != (made{ID: "key_1", Secret: "secret-of-the-first"}) {
			t.Errorf("send %d = %+v, %v; want the first send's result", i, got[i], errs[i])
		}
	}
	if runs.Load() != 1 {
		t.Fatalf("eight sends of one form ran %d times, want once", runs.Load())
	}

	*now = now.Add(3 * time.Minute) // a reload of the answer later
	if v, err := idempotency.Once(ctx, w.s, "user:a", token, work); !errors.Is(err, idempotency.ErrFormSent) || v.Secret != "" {
		t.Errorf("a send three minutes later = %+v, %v; want ErrFormSent and no secret", v, err)
	}
	if e, ok := fault.As(idempotency.ErrFormSent); !ok || e.Code != fault.Conflict {
		t.Errorf("ErrFormSent = %v, want a conflict", idempotency.ErrFormSent)
	}
	if _, err := idempotency.Once(ctx, w.s, "user:b", token, work); err != nil || runs.Load() != 2 {
		t.Errorf("another person's form with the same token = %v (%d runs), want it run", err, runs.Load())
	}
	for _, k := range w.redis.Keys(t, "*") {
		if v, _ := w.redis.Client.Get(ctx, k).Result(); strings.Contains(k, token) || strings.Contains(v, "secret-of-the-first") {
			t.Errorf("Redis keeps the token or the secret in the clear under %s", k)
		}
	}
}

// The work of a form whose sender leaves runs to its end, and a resend
// gets its result: a double click drops the first send's connection while
// the second send waits for the first's work.
func TestAFormsWorkOutlivesItsSender(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	token := idempotency.FormToken()
	gone, leave := context.WithCancel(context.Background())
	v, err := idempotency.Once(gone, w.s, "user:a", token, func(ctx context.Context) (made, error) {
		leave() // the browser drops the first send
		if err := ctx.Err(); err != nil {
			return made{}, err
		}
		return made{ID: "key_1", Secret: "secret-of-the-first"}, nil
	})
	if err != nil || v.ID != "key_1" {
		t.Fatalf("the send whose sender left = %+v, %v; want its work done", v, err)
	}
	again := func(context.Context) (made, error) {
		t.Error("the resend ran the work again")
		return made{}, nil
	}
	if v, err := idempotency.Once(context.Background(), w.s, "user:a", token, again); err != nil || v != (made{ID: "key_1", Secret: "secret-of-the-first"}) {
		t.Errorf("the resend = %+v, %v; want the first send's result", v, err)
	}
}

// A failed run frees its token, even when its sender has gone, so that the
// form can be sent again; a missing or overlong token is refused without
// running.
func TestAFormThatFailedCanBeSentAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	runs := 0
	ok := func(context.Context) (made, error) { runs++; return made{ID: "key"}, nil }

	failing := idempotency.FormToken()
	refused := fault.Invalid("name", "too long")
	if _, err := idempotency.Once(ctx, w.s, "user:a", failing, func(context.Context) (made, error) { return made{}, refused }); !errors.Is(err, refused) {
		t.Errorf("a failed run = %v, want its error", err)
	}
	if v, err := idempotency.Once(ctx, w.s, "user:a", failing, ok); err != nil || v.ID != "key" || runs != 1 {
		t.Errorf("the resend of a refused form = %+v, %v (%d runs), want it run", v, err, runs)
	}

	left := idempotency.FormToken() // the sender goes while the work fails
	gone, leave := context.WithCancel(ctx)
	_, err := idempotency.Once(gone, w.s, "user:a", left, func(context.Context) (made, error) { leave(); return made{}, gone.Err() })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a run whose sender left = %v, want its error", err)
	}
	if _, err := idempotency.Once(ctx, w.s, "user:a", left, ok); err != nil || runs != 2 {
		t.Errorf("the resend of a form whose sender left = %v (%d runs), want it run", err, runs)
	}

	for _, bad := range []string{"", strings.Repeat("x", 65)} {
		_, err := idempotency.Once(ctx, w.s, "user:a", bad, ok)
		if e, isFault := fault.As(err); !isFault || e.Code != fault.Validation || e.Field != idempotency.FormField || runs != 2 {
			t.Errorf("a token of %d bytes = %v (%d runs), want a validation error naming %q and no run", len(bad), err, runs, idempotency.FormField)
		}
	}
}
