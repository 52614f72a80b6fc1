package namesearch

import (
	"cmp"
	"slices"
)

// listDepth is how many entries each ranker hands to the fusion, unless a
// search asks for more. Reciprocal rank fusion gives a rank past it too
// little to lift an entry into the first five.
const listDepth = 50

// scored is an entry (by slot) with a ranker's score, higher better.
type scored struct {
	slot  int32
	score float64
}

// top returns the n best of list by score, ties by domain, best first. It
// keeps a heap of n, so a long list costs O(len(list) log n).
func (ix *Index) top(list []scored, n int) []scored {
	better := func(a, b scored) bool {
		return a.score > b.score || a.score == b.score && ix.slots[a.slot].domain < ix.slots[b.slot].domain
	}
	// h is a min-heap under better: h[0] is the worst kept.
	h := make([]scored, 0, min(n, len(list)))
	for _, s := range list {
		switch {
		case len(h) < n:
			h = append(h, s)
			for i := len(h) - 1; i > 0 && better(h[(i-1)/2], h[i]); i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
		case n > 0 && better(s, h[0]):
			h[0] = s
			for i := 0; ; {
				worst, l, r := i, 2*i+1, 2*i+2
				if l < len(h) && better(h[worst], h[l]) {
					worst = l
				}
				if r < len(h) && better(h[worst], h[r]) {
					worst = r
				}
				if worst == i {
					break
				}
				h[i], h[worst] = h[worst], h[i]
				i = worst
			}
		}
	}
	slices.SortFunc(h, func(a, b scored) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(ix.slots[a.slot].domain, ix.slots[b.slot].domain))
	})
	return h
}

// scratch is the per-search working memory, one value per slot, pooled so
// a search allocates little.
type scratch struct {
	counts []uint16  // trigram ranker: shared trigrams
	best   []float32 // keyword and semantic rankers: the current word's best match
	total  []float32 // keyword and semantic rankers: the sum over words
	// wordTouched and touched list the slots whose best and total are not
	// zero, so that resetting costs what was used.
	wordTouched, touched []int32
	// The lists the rankers build before picking their best: kept from
	// search to search, since at a million labels a query touches tens
	// of thousands, and allocating them anew made most of the garbage.
	// The trigram ranker has its own, as it runs beside the others.
	listed      []scored
	gramTouched []int32
	gramListed  []scored
}

func (ix *Index) getScratch() *scratch {
	sc, _ := ix.scratch.Get().(*scratch)
	if sc == nil || len(sc.counts) < len(ix.slots) {
		n := cap(ix.slots)
		sc = &scratch{counts: make([]uint16, n), best: make([]float32, n), total: make([]float32, n)}
	}
	return sc
}

// offer records w as a match of the current word for slot n; the word
// keeps its best match per slot.
func (sc *scratch) offer(n int32, w float64) {
	if sc.best[n] == 0 {
		sc.wordTouched = append(sc.wordTouched, n)
	}
	sc.best[n] = max(sc.best[n], float32(w))
}

// matched is the number of slots the current word matched.
func (sc *scratch) matched() int { return len(sc.wordTouched) }

// endWord adds the current word's best matches, times weight, to the
// totals.
func (sc *scratch) endWord(weight float64) {
	for _, n := range sc.wordTouched {
		if sc.total[n] == 0 {
			sc.touched = append(sc.touched, n)
		}
		sc.total[n] += sc.best[n] * float32(weight)
		sc.best[n] = 0
	}
	sc.wordTouched = sc.wordTouched[:0]
}

// totals returns the slots with their totals and resets them. The list is
// the scratch's own, good until the next call.
func (sc *scratch) totals(adjust func(n int32, total float64) float64) []scored {
	out := sc.listed[:0]
	for _, n := range sc.touched {
		out = append(out, scored{n, adjust(n, float64(sc.total[n]))})
		sc.total[n] = 0
	}
	sc.touched = sc.touched[:0]
	sc.listed = out
	return out
}
