package tasks

import (
	"context"
	"testing"
)

// FoundDone is heard in a tracked run only, and only once called.
func TestFoundDoneIsHeardInATrackedRun(t *testing.T) {
	t.Parallel()
	FoundDone(context.Background()) // untracked: nothing to tell, no harm
	ctx, found := TrackFoundDone(context.Background())
	if found() {
		t.Fatal("a run that called nothing is found done")
	}
	FoundDone(ctx)
	if !found() {
		t.Error("FoundDone in the run was not heard")
	}
}
