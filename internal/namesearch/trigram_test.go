package namesearch

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTrigrams(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		// The example of the pg_trgm documentation.
		{"word padded", "cat", []string{"  c", " ca", "at ", "cat"}},
		{"words split, case folded", "A-b", []string{"  a", "  b", " a ", " b "}},
		{"repeats once", "aaa", []string{"  a", " aa", "aa ", "aaa"}},
		{"nothing", "--", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, g := range trigrams(tt.text, nil) {
				got = append(got, string([]byte{byte(g >> 16), byte(g >> 8), byte(g)}))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("trigrams(%q) (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestTrigramRanking(t *testing.T) {
	tests := []struct {
		name  string
		label string
		query string
		want  float64 // 0: not ranked
	}{
		// Postgres: SELECT similarity('word', 'two words') gives 0.36363637.
		{"pg_trgm documentation", "word", "two words", 4.0 / 11},
		{"same", "cheapflights", "cheapflights", 1},
		{"hyphen ignored", "cheap-flights", "cheapflights", 1},
		{"below the threshold", "vintagewear", "vino", 0},
		{"disjoint", "abc", "xyz", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := New([]Entry{{ID: "1", Domain: tt.label + ".com"}})
			sc := ix.getScratch()
			var got float64
			for _, s := range ix.trigramRanking(parseQuery(ix.lx, tt.query, noTerms), sc) {
				got = s.score
			}
			if math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("similarity(%q, %q) = %v, want %v", tt.label, tt.query, got, tt.want)
			}
		})
	}
}
