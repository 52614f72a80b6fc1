package tasks

import (
	"context"
	"sync/atomic"
)

// foundDoneKey holds, in a running task's context, whether the task found
// its work done already.
type foundDoneKey struct{}

// TrackFoundDone returns ctx for a task run in which FoundDone is heard,
// and a report of whether it was. The worker counts such runs: a task run
// again after a crash or a Redis outage shows there, its effect not
// doubled.
func TrackFoundDone(ctx context.Context) (context.Context, func() bool) {
	var found atomic.Bool
	return context.WithValue(ctx, foundDoneKey{}, &found), found.Load
}

// FoundDone tells the running task's worker that the task found its work
// done by an earlier run (a terminal row, a step written, a delivery
// settled) and left it as it was. Outside a tracked run it does nothing.
func FoundDone(ctx context.Context) {
	if found, ok := ctx.Value(foundDoneKey{}).(*atomic.Bool); ok {
		found.Store(true)
	}
}
