package namesearch

import (
	"strings"
	"testing"
)

// FuzzSegment checks that Segment never panics and never loses or invents
// a letter or digit. (Its time is linear by construction, a window of the
// longest word over the input; BenchmarkSegmentLong shows it.)
func FuzzSegment(f *testing.F) {
	for _, s := range []string{"cheapflightsnow", "best-coffee-shop", "247plumbing", "", "--", "aaaaaaaaaaaaaaaaaaaaaaaa", "Ωmega", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, label string) {
		words := Segment(label)
		var want strings.Builder
		for i := 0; i < len(label); i++ {
			if c := toLower(label[i : i+1])[0]; isAlnum(c) {
				want.WriteByte(c)
			}
		}
		if got := strings.Join(words, ""); got != want.String() {
			t.Errorf("Segment(%q) = %q, which spells %q, want %q", label, words, got, want.String())
		}
		for _, w := range words {
			if w == "" {
				t.Errorf("Segment(%q) has an empty word", label)
			}
		}
	})
}

// FuzzSearch checks that any query, however hostile, gives at most k
// distinct hits, and the same hits twice. (A query is read up to
// MaxQueryBytes, so no query costs more than a long honest one.)
func FuzzSearch(f *testing.F) {
	ix := New(entriesOf(SampleInventory(2000, 9)...))
	for _, s := range []string{"inexpensive plane tickets", "coffee shop .io", "", "....", strings.Repeat("a ", 500), strings.Repeat("x", 1000), "the of and", "é€\xff"} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, q string, k int) {
		hits := ix.Search(q, k)
		limit := k
		if k <= 0 {
			limit = DefaultLimit
		}
		if len(hits) > min(limit, MaxLimit) {
			t.Errorf("Search(%q, %d) gave %d hits", q, k, len(hits))
		}
		ids := map[string]bool{}
		for _, h := range hits {
			if ids[h.ID] {
				t.Errorf("Search(%q): %s twice", q, h.ID)
			}
			ids[h.ID] = true
		}
		again := ix.Search(q, k)
		if len(again) != len(hits) {
			t.Fatalf("Search(%q) gave %d hits, then %d", q, len(hits), len(again))
		}
		for i := range hits {
			if hits[i] != again[i] {
				t.Errorf("Search(%q) hit %d: %v, then %v", q, i, hits[i], again[i])
			}
		}
	})
}
