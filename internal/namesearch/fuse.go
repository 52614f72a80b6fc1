package namesearch

import (
	"cmp"
	"slices"
)

// tldWeight is what naming an entry's TLD in the query is worth, as a
// share of a first place: enough to order close matches, not to lift a poor
// one.
const tldWeight = 0.3

// fusion sums reciprocal ranks per slot: an entry at rank r of a list
// gains weight/(k+r).
type fusion struct {
	k     float64
	score map[int32]float64
}

func newFusion(k float64) fusion { return fusion{k, map[int32]float64{}} }

// addScored adds a ranker's list. Entries with equal scores share a rank
// (the best of their positions), so the order of ties never matters.
func (f fusion) addScored(list []scored, weight float64) {
	rank := 0
	for i, s := range list {
		if i == 0 || s.score != list[i-1].score {
			rank = i + 1
		}
		f.score[s.slot] += weight / (f.k + float64(rank))
	}
}

// addSlots adds a list that is already ranked, best first.
func (f fusion) addSlots(list []int32, weight float64) {
	for i, n := range list {
		f.score[n] += weight / (f.k + float64(i+1))
	}
}

// hits returns the k best, ties broken by domain. A hit whose label has a
// word that is not the query's and that maxRepeats better hits already
// have is put behind the others: five results should not be five
// spellings of one idea ("oceanhealth", "oceanbarber", ... for "sea
// voyage") when other ideas are in the running.
func (ix *Index) hits(f fusion, q query, tlds map[string]bool, k int) []Hit {
	hits := make([]Hit, 0, len(f.score))
	for n, score := range f.score {
		s := &ix.slots[n]
		if tlds[s.tld] {
			score += tldWeight / (f.k + 1)
		}
		hits = append(hits, Hit{ID: s.id, Domain: s.domain, Score: score})
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Domain, b.Domain), cmp.Compare(a.ID, b.ID))
	})
	queryWords := map[string]bool{}
	for _, w := range q.words {
		for _, l := range append(ix.lx.lemmas(w), w) {
			queryWords[l] = true
		}
	}
	out := make([]Hit, 0, min(k, len(hits)))
	var later []Hit
	seen := map[string]int{}
	for _, h := range hits {
		if len(out) == k {
			break
		}
		words := ix.slots[ix.byID[h.ID]].terms
		repeated := slices.ContainsFunc(words, func(w string) bool { return !queryWords[w] && seen[w] >= maxRepeats })
		if repeated {
			later = append(later, h)
			continue
		}
		for _, w := range words {
			seen[w]++
		}
		out = append(out, h)
	}
	return append(out, later[:min(k-len(out), len(later))]...)
}

// maxRepeats is how many hits may share a word the query does not have
// before the next one is put behind the others.
const maxRepeats = 3
