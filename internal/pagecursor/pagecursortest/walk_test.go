package pagecursortest

import (
	"errors"
	"runtime"
	"slices"
	"strconv"
	"testing"
)

// A list of 7 rows in pages of 3 walks to its 7 rows, in order, with the
// cursors of its second and third pages.
func TestWalkReadsEveryPage(t *testing.T) {
	rows := []int{1, 2, 3, 4, 5, 6, 7}
	page := func(cursor string) ([]int, string, error) {
		from := 0
		if cursor != "" {
			from, _ = strconv.Atoi(cursor)
		}
		to := min(from+3, len(rows))
		next := ""
		if to < len(rows) {
			next = strconv.Itoa(to)
		}
		return rows[from:to], next, nil
	}
	got, cursors := Walk(t, page)
	if !slices.Equal(got, rows) || !slices.Equal(cursors, []string{"3", "6"}) {
		t.Errorf("Walk = %v with cursors %q; want %v with [3 6]", got, cursors, rows)
	}
}

// A list that gives a cursor it gave before fails the walk instead of
// going round forever; so does a list that fails.
func TestWalkStopsOnALoopOrAnError(t *testing.T) {
	calls := 0
	loop := func(string) ([]int, string, error) {
		if calls++; calls > 100 { // a walk that missed the loop ends, unfailed
			return nil, "", nil
		}
		return []int{1}, "again", nil
	}
	for _, tc := range []struct {
		name string
		page func(string) ([]int, string, error)
	}{
		{"a list that loops", loop},
		{"a list that fails", func(string) ([]int, string, error) { return nil, "", errors.New("down") }},
	} {
		rec := &recorder{TB: t}
		done := make(chan struct{})
		go func() { // Fatalf ends the goroutine, as testing's does
			defer close(done)
			Walk(rec, tc.page)
		}()
		<-done
		if !rec.failed {
			t.Errorf("Walk of %s did not fail", tc.name)
		}
	}
}

// recorder is a testing.TB whose Fatalf records the failure and ends the
// calling goroutine, as testing's own does.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(string, ...any) {
	r.failed = true
	runtime.Goexit()
}
