package hostlimit

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A host gives out its slots and no more; another host has its own; a
// slot given back is taken again; a waiter leaves when its context ends.
func TestSlotsPerHost(t *testing.T) {
	l := New(2)
	ctx := context.Background()
	a1, err1 := l.Acquire(ctx, "rdap.a.test")
	_, err2 := l.Acquire(ctx, "rdap.a.test")
	_, err3 := l.Acquire(ctx, "rdap.b.test")
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := l.Acquire(short, "rdap.a.test"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a third slot of a host of two = %v, want the wait to end with its context", err)
	}
	a1()
	if _, err := l.Acquire(short, "rdap.a.test"); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a slot given back: %v", err)
	}
	if New(0).per != 1 {
		t.Error("a limiter of no slots")
	}
}
