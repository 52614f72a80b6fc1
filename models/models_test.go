package models

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/domaind/domaind/internal/secret"
)

func TestErrorTextKeepsCharactersWhole(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		max       int
		want      string
	}{
		{"fits", "lookup failed", 20, "lookup failed"},
		{"ascii cut", "lookup failed", 6, "lookup"},
		{"cut inside a 2-byte character", "café au lait", 4, "caf"},
		{"cut after a 2-byte character", "café au lait", 5, "café"},
		{"cut inside a 4-byte character", "ok 🦊 done", 5, "ok "},
	} {
		got := ErrorText(errors.New(tc.msg), tc.max)
		if got != tc.want || !utf8.ValidString(got) || len(got) > tc.max {
			t.Errorf("%s: ErrorText(%q, %d) = %q, want %q", tc.name, tc.msg, tc.max, got, tc.want)
		}
	}
}

// A sorted id has secret.NewID's form, ids made in later milliseconds
// sort after, and ids made in one are still unique. (The milliseconds are
// the wall clock's: a clock set back while it runs fails the test.)
func TestSortedIDsRiseWithTime(t *testing.T) {
	const prefix = "evt_"
	millisecond := func(id string) string { return id[:len(prefix)+12] }
	firsts := []string{NewSortedID(prefix)} // the first id of each millisecond seen
	if !secret.IsID(firsts[0], prefix) {
		t.Fatalf("%q is not an id of secret.NewID's form", firsts[0])
	}
	seen := map[string]bool{firsts[0]: true}
	for deadline := time.Now().Add(time.Second); len(firsts) < 6; {
		id := NewSortedID(prefix)
		if seen[id] {
			t.Fatalf("%s made twice", id)
		}
		seen[id] = true
		if last := firsts[len(firsts)-1]; millisecond(id) != millisecond(last) {
			if id <= last {
				t.Fatalf("%s, made in a millisecond after %s's, does not sort after it", id, last)
			}
			firsts = append(firsts, id)
		}
		if time.Now().After(deadline) {
			t.Fatalf("ids of %d milliseconds within a second (%d made); want 6", len(firsts), len(seen))
		}
	}
}

// SortedIDTime reads back the millisecond a sorted id was made in, and
// takes nothing of another form.
func TestSortedIDTimeReadsTheMillisecond(t *testing.T) {
	at := time.Date(2026, 10, 1, 12, 30, 45, 123_456_789, time.UTC)
	if got, ok := SortedIDTime(SortedIDAt("evt_", at), "evt_"); !ok || !got.Equal(at.Truncate(time.Millisecond)) {
		t.Errorf("SortedIDTime = %v, %v; want %v", got, ok, at.Truncate(time.Millisecond))
	}
	id := SortedIDAt("evt_", at)
	for _, bad := range []string{"whd_" + id[4:], id + "0", id[:len(id)-1], strings.ToUpper(id[:4]) + id[4:], "evt_0199A0B1C2D3e4f5a6b7c8d9", "evt_" + strings.Repeat("g", 24)} {
		if _, ok := SortedIDTime(bad, "evt_"); ok {
			t.Errorf("SortedIDTime(%q) took it", bad)
		}
	}
}
