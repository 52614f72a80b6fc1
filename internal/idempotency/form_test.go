package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/idempotency"
)

// A form's token runs its work once, however often and however fast the
// form is sent again; a failed run leaves the token to a resend; a
// missing or overlong token is refused without running; and another
// scope's token is its own.
func TestFormTokensRunOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	token := idempotency.FormToken()
	if len(token) < 20 || token == idempotency.FormToken() {
		t.Fatalf("FormToken = %q, want a long random token", token)
	}

	var runs atomic.Int32
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs { // a button pressed eight times at once
		wg.Go(func() { errs[i] = w.s.Once(ctx, "user:a", token, func() error { runs.Add(1); return nil }) })
	}
	wg.Wait()
	sent := 0
	for _, err := range errs {
		if errors.Is(err, idempotency.ErrFormSent) {
			sent++
		} else if err != nil {
			t.Errorf("Once = %v", err)
		}
	}
	if runs.Load() != 1 || sent != 7 {
		t.Fatalf("eight sends of one form ran %d times and were refused %d times, want 1 and 7", runs.Load(), sent)
	}
	if e, ok := fault.As(idempotency.ErrFormSent); !ok || e.Code != fault.Conflict {
		t.Errorf("ErrFormSent = %v, want a conflict", idempotency.ErrFormSent)
	}
	if err := w.s.Once(ctx, "user:b", token, func() error { return nil }); err != nil {
		t.Errorf("another person's form with the same token = %v, want it run", err)
	}

	failing := idempotency.FormToken()
	refused := fault.Invalid("name", "too long")
	if err := w.s.Once(ctx, "user:a", failing, func() error { return refused }); !errors.Is(err, refused) {
		t.Errorf("a failed run = %v, want its error", err)
	}
	if err := w.s.Once(ctx, "user:a", failing, func() error { runs.Add(1); return nil }); err != nil || runs.Load() != 2 {
		t.Errorf("the resend of a refused form = %v (%d runs), want it run", err, runs.Load())
	}

	left := idempotency.FormToken() // the sender goes while the work fails
	gone, leave := context.WithCancel(ctx)
	if err := w.s.Once(gone, "user:a", left, func() error { leave(); return gone.Err() }); !errors.Is(err, context.Canceled) {
		t.Errorf("a run whose sender left = %v, want its error", err)
	}
	if err := w.s.Once(ctx, "user:a", left, func() error { runs.Add(1); return nil }); err != nil || runs.Load() != 3 {
		t.Errorf("the resend of a form whose sender left = %v (%d runs), want it run", err, runs.Load())
	}

	for _, bad := range []string{"", strings.Repeat("x", 65)} {
		err := w.s.Once(ctx, "user:a", bad, func() error { runs.Add(1); return nil })
		if e, ok := fault.As(err); !ok || e.Code != fault.Validation || e.Field != idempotency.FormField || runs.Load() != 3 {
			t.Errorf("a token of %d bytes = %v (%d runs), want a validation error naming %q and no run", len(bad), err, runs.Load(), idempotency.FormField)
		}
	}
	for _, k := range w.redis.Keys(t, "*") {
		if strings.Contains(k, token) {
			t.Errorf("Redis keeps the token itself in the key %s", k)
		}
	}
}
