package namesearch

import "math"

// Spelling. A query word that is no word at all (not in the frequency
// list, not a WordNet lemma, not part of a WordNet compound such as
// "hatha" of hatha_yoga) and in no name of the inventory either is
// read as the most frequent WordNet word one edit away from it (a letter
// left out, added, changed, or two swapped): "resturant" as restaurant,
// "recieve" as receive. It is read so only when that word is more likely
// than the best split of the token into words, less correctionCost: a
// run of words ("cheapflights") is left as it is. Short tokens are left
// too: at four letters and fewer, one edit away lies a common word for
// almost anything ("maki", "vape"). The trigram ranker still compares the
// label with what was typed.
const (
	minCorrectedLen = 5
	// correctionCost is, in nats, how much less likely a word read for a
	// misspelling counts than one typed as it is.
	correctionCost = 10.0
)

// correct returns the word tok was most likely meant to be: tok itself,
// or its correction. inNames reports whether a name of the inventory
// holds tok ("zillow" in zillowhomes, "autonation"), which makes it no
// misspelling: the buyer may mean those names.
func (lx *lexicon) correct(tok string, inNames func(string) bool) string {
	if len(tok) < minCorrectedLen || len(tok) > lx.maxWordLen+1 || !lettersOnly(tok) || lx.known(tok) || inNames(tok) {
		return tok
	}
	best, bestLogProb := "", math.Inf(-1)
	lx.forEachEdit(tok, func(c string) {
		if p, ok := lx.logProb[c]; ok && p > bestLogProb && lx.hasSense(c) {
			best, bestLogProb = c, p
		}
	})
	if best == "" {
		return tok
	}
	if split, _ := lx.split(tok); split[len(tok)] >= bestLogProb-wordPenalty-correctionCost {
		return tok
	}
	return best
}

// known reports whether w is a word the lexicon has: in the frequency
// list, a lemma or a form of one, or a word of a WordNet compound.
func (lx *lexicon) known(w string) bool {
	_, ok := lx.logProb[w]
	return ok || lx.compoundWords[w] || lx.hasSense(w)
}

// hasSense reports whether w is a WordNet lemma or a form of one
// ("supplies").
func (lx *lexicon) hasSense(w string) bool {
	for _, l := range lx.lemmas(w) {
		if lx.senses[l] != nil {
			return true
		}
	}
	return false
}

// forEachEdit calls fn with each string one edit from w: a letter
// deleted, two adjacent letters swapped, a letter changed, a letter
// inserted (a to z). A string may come more than once.
func (lx *lexicon) forEachEdit(w string, fn func(string)) {
	b := make([]byte, 0, len(w)+1)
	for i := range len(w) {
		fn(string(append(append(b[:0], w[:i]...), w[i+1:]...)))
		if i+1 < len(w) {
			fn(string(append(append(append(b[:0], w[:i]...), w[i+1], w[i]), w[i+2:]...)))
		}
	}
	for i := range len(w) + 1 {
		for c := byte('a'); c <= 'z'; c++ {
			if i < len(w) && c != w[i] {
				fn(string(append(append(append(b[:0], w[:i]...), c), w[i+1:]...)))
			}
			fn(string(append(append(append(b[:0], w[:i]...), c), w[i:]...)))
		}
	}
}

func lettersOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}
