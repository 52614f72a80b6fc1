package namesearch

import (
	"math"
	"strings"
)

// Keyword scores: a query word that is a word of the label counts
// wordMatch, one that is only part of the label partialMatch ("flight" in
// "flightdeals" is a word; "light" in it is a part). A label that spells
// the whole query scores exactMatch more, one that contains it containsMatch.
const (
	wordMatch     = 1.0
	partialMatch  = 0.6
	exactMatch    = 1.5
	containsMatch = 0.5
	// coverage is the weight of the share of the label the query covers,
	// which puts "cheapflights" above "cheapflightsandhotels".
	coverage = 0.2
)

// keywordRanking ranks labels that contain the query's words.
func (ix *Index) keywordRanking(q query, sc *scratch) []scored {
	for _, w := range q.words {
		for _, l := range ix.lx.lemmas(w) {
			for _, n := range ix.terms[l] {
				sc.offer(n, wordMatch)
			}
		}
		for _, n := range ix.terms[w] {
			sc.offer(n, wordMatch)
		}
		if len(w) >= 3 {
			for _, n := range ix.substringCandidates(w) {
				if sc.best[n] < partialMatch && strings.Contains(ix.slots[n].label, w) {
					sc.offer(n, partialMatch)
				}
			}
		}
		sc.endWord(ix.rarity(sc.matched()))
	}
	if len(q.compact) >= 3 {
		for _, n := range ix.substringCandidates(q.compact) {
			if label := ix.slots[n].label; label == q.compact {
				sc.offer(n, exactMatch)
			} else if len(q.tokens) > 1 && strings.Contains(label, q.compact) {
				sc.offer(n, containsMatch)
			}
		}
		sc.endWord(1)
	}
	queryLen := 0
	for _, w := range q.words {
		queryLen += len(w)
	}
	return ix.top(sc.totals(func(n int32, total float64) float64 {
		label := ix.slots[n].label
		return total + coverage*float64(min(queryLen, len(label)))/float64(len(label))
	}), q.depth)
}

// rarity weighs a query word by how few labels it matches, from 0 to 1:
// the inverse document frequency ln(1+N/df) over its largest value, so
// that of "web hosting" the rarer "hosting" decides when no label has
// both.
func (ix *Index) rarity(df int) float64 {
	n := float64(len(ix.byID))
	return math.Log(1+n/float64(max(df, 1))) / math.Log(1+n)
}

// substringCandidates returns the slots whose label may contain s (len(s)
// >= 3): those that have s's rarest inner trigram.
func (ix *Index) substringCandidates(s string) []int32 {
	var best []int32
	for i := 0; i+3 <= len(s); i++ {
		p := ix.grams[trigramKey(s[i], s[i+1], s[i+2])]
		if len(p) == 0 {
			return nil
		}
		if i == 0 || len(p) < len(best) {
			best = p
		}
	}
	return best
}
