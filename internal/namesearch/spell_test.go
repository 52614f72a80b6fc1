package namesearch

import (
	"slices"
	"testing"
)

// A word one letter off a common word is read as that word; a word, a
// run of words, a word of the inventory and a short token are left as
// they are.
func TestCorrect(t *testing.T) {
	lx := loadLexicon()
	inventory := func(w string) bool { return w == "zillow" }
	for _, tt := range []struct{ typed, want string }{
		{"resturant", "restaurant"}, // a letter left out
		{"recieve", "receive"},      // two swapped
		{"buisness", "business"},    // two swapped
		{"photograper", "photographer"},
		{"jewelery", "jewelry"},       // a letter too many
		{"appartments", "apartments"}, // a form of a lemma
		{"restaurant", "restaurant"},  // a word
		{"cheapflights", "cheapflights"},
		{"hatha", "hatha"},   // a word of a compound (hatha_yoga)
		{"crypto", "crypto"}, // in the frequency list
		{"zillow", "zillow"}, // a word of the inventory's names
		{"maki", "maki"},     // too short to tell
		{"qwzxv", "qwzxv"},   // nothing near
	} {
		if got := lx.correct(tt.typed, inventory); got != tt.want {
			t.Errorf("correct(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}

// A search for a misspelt word finds what the word finds: most of its
// first five hits are among the first twenty of the word spelt right.
func TestMisspeltQueriesFindWhatTheWordFinds(t *testing.T) {
	ix := New(entriesOf(SampleInventory(20_000, 7)...))
	for _, tt := range []struct{ typed, meant string }{
		{"jewelery store", "jewelry store"},
		{"resturant guide", "restaurant guide"},
		{"buisness loans", "business loans"},
		{"acommodation", "accommodation"},
	} {
		meant := map[string]bool{}
		for _, h := range ix.Search(tt.meant, 20) {
			meant[h.Domain] = true
		}
		var got []string
		same := 0
		for _, h := range ix.Search(tt.typed, 5) {
			got = append(got, h.Domain)
			if meant[h.Domain] {
				same++
			}
		}
		if len(meant) < 20 || same < 3 {
			t.Errorf("%q finds %v: %d of the %d hits of %q, want 3 or more", tt.typed, got, same, len(meant), tt.meant)
		}
	}
}

// A token a name holds is what the buyer typed, not a misspelling:
// "autonation" is automation only where no name has it.
func TestCorrectionLeavesWhatNamesHold(t *testing.T) {
	for _, tt := range []struct {
		names []string
		want  []string
	}{
		{[]string{"autonationcars.com", "automationtools.com"}, []string{"auto", "nation"}},
		{[]string{"automationtools.com"}, []string{"automation"}},
	} {
		ix := New(entriesOf(tt.names...))
		ix.mu.RLock()
		got := parseQuery(ix.lx, "autonation", ix.inNames).words
		ix.mu.RUnlock()
		if !slices.Equal(got, tt.want) {
			t.Errorf("over %v, autonation is read as %v, want %v", tt.names, got, tt.want)
		}
	}
}
