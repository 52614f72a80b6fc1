package namesearch

// semanticRanking ranks labels by how closely their words relate in
// meaning to the query's concepts: each concept counts its best related
// word in the label (weighted as in related.go), summed over concepts. Labels lose a little for each
// word (tuning.extraWord).
func (ix *Index) semanticRanking(q query, sc *scratch) []scored {
	for _, c := range q.concepts {
		related := ix.lx.related(c.word, ix.tuning.related)
		importance := 1.0
		if c.part {
			importance = ix.tuning.partWeight
		}
		for term, weight := range related {
			for _, n := range ix.terms[term] {
				sc.offer(n, importance*weight)
			}
		}
		sc.endWord(1)
	}
	return ix.top(sc.totals(func(n int32, total float64) float64 {
		return total - ix.tuning.extraWord*float64(ix.sizes[n].words)
	}), q.depth)
}
