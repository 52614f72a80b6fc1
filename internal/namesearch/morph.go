package namesearch

import (
	"slices"
	"strings"
)

// suffixRules are WordNet's morphy detachment rules for nouns, verbs and
// adjectives ("flights" -> "flight", "grooming" -> "groom", "cheaper" ->
// "cheap"), plus the doubled consonant of "running" and "shopping".
var suffixRules = []struct{ suffix, replace string }{
	{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"},
	{"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
	{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"},
}

// lemmas returns the WordNet base forms of w, w itself first when it is a
// lemma ("grooming" gives grooming and groom). Of the rules for one suffix
// only the first that gives a lemma counts, so "caring" is care, not car.
// A word WordNet does not know is its own only lemma.
func (lx *lexicon) lemmas(w string) []string {
	var out []string
	add := func(l string) {
		if _, ok := lx.senses[l]; ok && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	add(w)
	for _, l := range lx.exceptions[w] {
		add(l)
	}
	found := "" // the suffix that already gave a lemma
	for _, r := range suffixRules {
		stem, ok := strings.CutSuffix(w, r.suffix)
		if !ok || len(stem) < 2 || r.suffix == found {
			continue
		}
		n := len(out)
		add(stem + r.replace)
		if r.replace == "" && (r.suffix == "ing" || r.suffix == "ed") && len(stem) > 2 && stem[len(stem)-1] == stem[len(stem)-2] {
			add(stem[:len(stem)-1])
		}
		if len(out) > n {
			found = r.suffix
		}
	}
	if len(out) == 0 {
		return []string{w}
	}
	return out
}
