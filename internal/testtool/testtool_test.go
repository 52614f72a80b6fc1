package testtool

import (
	"testing"
)

// recorder is a testing.TB that records how a test ended.
type recorder struct {
	testing.TB
	fatal, skipped bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.fatal = true }
func (r *recorder) Skipf(string, ...any)  { r.skipped = true }

func TestPath(t *testing.T) {
	if p := Path(t, "the shell", "no-such-program-x", "sh"); p == "" {
		t.Error("Path did not find sh after a missing name")
	}
	t.Setenv("CI", "")
	r := &recorder{TB: t}
	Path(r, "nothing", "no-such-program-x")
	if !r.skipped || r.fatal {
		t.Errorf("outside CI a missing program: skipped %v, failed %v; want skipped", r.skipped, r.fatal)
	}
	t.Setenv("CI", "true")
	r = &recorder{TB: t}
	Path(r, "nothing", "no-such-program-x")
	if r.skipped || !r.fatal {
		t.Errorf("in CI a missing program: skipped %v, failed %v; want failed", r.skipped, r.fatal)
	}
}
