package namesearch

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseQuery(t *testing.T) {
	tests := []struct {
		name         string
		q            string
		wantWords    []string
		wantConcepts []concept
		wantCompact  string
		wantTLDOnly  []string
	}{
		{"stop and filler words dropped", "I want a place for cheap flights", []string{"place", "cheap", "flights"},
			[]concept{{"place", false}, {"cheap", false}, {"flights", false}}, "iwantaplaceforcheapflights", nil},
		{"run-together words split", "CheapFlightsNow", []string{"cheap", "flights", "now"},
			[]concept{{"cheap", false}, {"flights", false}, {"now", false}}, "cheapflightsnow", nil},
		{"compound with its parts", "musical instruments", []string{"musical", "instruments"},
			[]concept{{"musical", true}, {"instruments", true}, {"musical_instrument", false}}, "musicalinstruments", nil},
		{"compound spelt as one word", "ale house", []string{"ale", "house"},
			[]concept{{"ale", true}, {"house", true}, {"alehouse", false}}, "alehouse", nil},
		{"TLD written with a dot", "coffee shop .io", []string{"coffee", "shop"},
			[]concept{{"coffee", true}, {"shop", true}, {"coffee_shop", false}}, "coffeeshop", []string{"io"}},
		{"filler verb by its lemma", "getting married", []string{"married"}, []concept{{"married", false}}, "gettingmarried", nil},
		{"marketplace words", "houses for sale", []string{"houses"}, []concept{{"houses", false}}, "housesforsale", nil},
		{"nothing", " -- ", nil, nil, "", nil},
	}
	lx := loadLexicon()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := parseQuery(lx, tt.q, noTerms)
			if diff := cmp.Diff(tt.wantWords, q.words); diff != "" {
				t.Errorf("words (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantConcepts, q.concepts, cmp.AllowUnexported(concept{})); diff != "" {
				t.Errorf("concepts (-want +got):\n%s", diff)
			}
			if q.compact != tt.wantCompact {
				t.Errorf("compact = %q, want %q", q.compact, tt.wantCompact)
			}
			var tlds []string
			for tld := range q.tldOnly {
				tlds = append(tlds, tld)
			}
			if diff := cmp.Diff(tt.wantTLDOnly, tlds); diff != "" {
				t.Errorf("tldOnly (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseQueryLimits(t *testing.T) {
	lx := loadLexicon()
	long := strings.Repeat("coffee tea juice soda water milk beer wine cider ", 20)
	q := parseQuery(lx, long, noTerms)
	if len(q.words) > MaxQueryWords {
		t.Errorf("%d words, want at most %d", len(q.words), MaxQueryWords)
	}
	if len(q.text) > MaxQueryBytes {
		t.Errorf("text of %d bytes, want at most %d", len(q.text), MaxQueryBytes)
	}
}

// noTerms is an inventory that has no word.
func noTerms(string) bool { return false }
