package namesearch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSegment(t *testing.T) {
	tests := []struct {
		name  string
		label string
		want  []string
	}{
		{"three words", "cheapflightsnow", []string{"cheap", "flights", "now"}},
		{"compound kept whole", "budgetairfare", []string{"budget", "airfare"}},
		{"gerund", "petgroomingpro", []string{"pet", "grooming", "pro"}},
		{"shop", "bestcoffeeshop", []string{"best", "coffee", "shop"}},
		{"short", "sunsetyoga", []string{"sunset", "yoga"}},
		{"haven is a word, not a contraction", "horsehaven", []string{"horse", "haven"}},
		{"hyphens separate", "best-coffee-shop", []string{"best", "coffee", "shop"}},
		{"digits are a word", "247plumbing", []string{"247", "plumbing"}},
		{"digits inside", "top10hotels", []string{"top", "10", "hotels"}},
		{"upper case folded", "CheapFlights", []string{"cheap", "flights"}},
		{"unknown piece stays whole", "zqxflights", []string{"zqx", "flights"}},
		{"empty", "", nil},
		{"only separators", "--", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Segment(tt.label)); diff != "" {
				t.Errorf("Segment(%q) (-want +got):\n%s", tt.label, diff)
			}
		})
	}
}
