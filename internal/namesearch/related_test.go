package namesearch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRelated(t *testing.T) {
	tests := []struct {
		name     string
		word     string
		related  string
		min, max float64 // the weight must lie in [min, max]
	}{
		{"itself", "coffee", "coffee", 1, 1},
		{"lemma of a plural", "flights", "flight", 0.8, 1},
		{"synonym", "inexpensive", "cheap", 0.8, 1},
		{"synonym, other way", "cheap", "inexpensive", 0.5, 1},
		{"similar adjective", "inexpensive", "affordable", 0.5, 1},
		{"compound head", "inexpensive", "budget", 0.2, 0.6},
		{"hypernym", "puppy", "dog", 0.4, 1},
		{"hyponym", "plane", "jet", 0.3, 1},
		{"derivation", "grooming", "groom", 0.8, 1},
		{"pertainym read backwards", "tooth", "dental", 0.4, 1},
		{"definition uses it", "plane", "airfare", 0.1, 0.5},
		{"defined by it", "airfare", "fare", 0.3, 1},
		{"rare sense counts little", "house", "firm", 0, 0.4},
		{"unrelated", "coffee", "lawyer", 0, 0},
		{"unknown word is itself", "zqxv", "zqxv", 1, 1},
	}
	lx := loadLexicon()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lx.related(tt.word, defaultRelated)[tt.related]
			if got < tt.min || got > tt.max {
				t.Errorf("related(%q)[%q] = %.3f, want in [%.2f, %.2f]", tt.word, tt.related, got, tt.min, tt.max)
			}
		})
	}
}

func TestRelatedOrder(t *testing.T) {
	tests := []struct {
		name                  string
		word, closer, farther string
	}{
		{"two relations beat one", "hairdresser", "barber", "artisan"},
		{"synonym beats compound head", "inexpensive", "cheap", "budget"},
		{"common sense beats rare", "house", "home", "firm"},
	}
	lx := loadLexicon()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := lx.related(tt.word, defaultRelated)
			if r[tt.closer] <= r[tt.farther] {
				t.Errorf("related(%q): %s %.3f, %s %.3f; want the first higher", tt.word, tt.closer, r[tt.closer], tt.farther, r[tt.farther])
			}
		})
	}
}

func TestLemmas(t *testing.T) {
	tests := []struct {
		name string
		word string
		want []string
	}{
		{"plural", "flights", []string{"flight"}},
		{"lemma and base", "grooming", []string{"grooming", "groom"}},
		{"one rule per suffix", "caring", []string{"caring", "care"}},
		{"irregular, and a lemma itself", "teeth", []string{"teeth", "tooth"}},
		{"doubled consonant", "shopping", []string{"shopping", "shop"}},
		{"every rule that gives a lemma", "pipes", []string{"pipe", "pip"}},
		{"unknown", "zqxv", []string{"zqxv"}},
	}
	lx := loadLexicon()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, lx.lemmas(tt.word)); diff != "" {
				t.Errorf("lemmas(%q) (-want +got):\n%s", tt.word, diff)
			}
		})
	}
}
