package namesearch

import (
	"strings"
	"sync"
)

// DefaultLimit is the number of hits Search returns when asked for k <= 0;
// MaxLimit the most it returns.
const (
	DefaultLimit = 5
	MaxLimit     = 100
)

// tuning holds the weights of the search. defaultTuning, which Search
// uses, was chosen by recall@5 and MRR on testdata/queries-tune.tsv (see
// relevance_test.go); queries-heldout.tsv checks that they hold.
type tuning struct {
	related relatedWeights

	// partWeight is the weight of a word that is part of a compound in
	// the query, next to the compound's 1.
	partWeight float64
	// extraWord is what each word of a label costs in the semantic ranking,
	// so that "cheapflights" ranks above "cheapflightsandcruises".
	extraWord float64
	// The rankers' weights in the fusion.
	semantic, keyword, trigram float64
	// rrfK is the constant of reciprocal rank fusion. The original paper
	// (Cormack et al., 2009) uses 60, which flattens the first ranks so much
	// that a label in all three lists but first in none beats the label
	// first in two ("happy pets": happytoys over happypetgrooming); 5 keeps
	// first places apart.
	rrfK float64
}

var defaultTuning = tuning{
	related:    defaultRelated,
	partWeight: 0.5,
	extraWord:  0.02,
	semantic:   1,
	keyword:    1,
	trigram:    0.5,
	rrfK:       5,
}

// SearchOption changes one search.
type SearchOption func(*searchOptions)

type searchOptions struct {
	trigram *[]string // nil: the in-memory trigram ranking
	extra   []weightedIDs
}

type weightedIDs struct {
	ids    []string
	weight float64
}

// WithTrigramRanking fuses ids, ranked best first, in place of the
// in-memory trigram ranking: for example the IDs Postgres orders by
// pg_trgm's similarity(label, query). IDs the index does not hold are
// skipped. An empty list leaves the search with no trigram ranking.
func WithTrigramRanking(ids []string) SearchOption {
	return func(o *searchOptions) { o.trigram = &ids }
}

// WithRanking fuses one more list of ids, ranked best first, with the given
// weight (the built-in rankers weigh 0.5 to 1). IDs the index does not hold
// are skipped.
func WithRanking(ids []string, weight float64) SearchOption {
	return func(o *searchOptions) { o.extra = append(o.extra, weightedIDs{ids, weight}) }
}

// Search returns up to k entries (DefaultLimit if k <= 0, at most MaxLimit)
// that match q by keyword, by trigram similarity or by meaning, best first.
// The order is deterministic: equal scores are ordered by domain, and it
// does not depend on the order of Add calls. So that the first hits are
// not all variations of one idea, a hit whose label shares a word the
// query does not have with three better hits is put behind the others. A
// query is read up to MaxQueryBytes and MaxQueryWords words; one with no
// letters or digits finds nothing.
func (ix *Index) Search(q string, k int, opts ...SearchOption) []Hit {
	if k <= 0 {
		k = DefaultLimit
	}
	k = min(k, MaxLimit)
	var o searchOptions
	for _, opt := range opts {
		opt(&o)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	pq := parseQuery(ix.lx, q, ix.inNames)
	pq.depth = max(pq.depth, k)
	if len(pq.tokens) == 0 && len(o.extra) == 0 && (o.trigram == nil || len(*o.trigram) == 0) {
		return []Hit{}
	}

	sc := ix.getScratch()
	defer ix.scratch.Put(sc)

	// The trigram ranker reads its own part of the scratch (counts), so it
	// runs beside the other two: at 1,000,000 names each takes milliseconds.
	var trigram []scored
	var wg sync.WaitGroup
	if o.trigram == nil && len(pq.tokens) > 0 {
		wg.Go(func() { trigram = ix.trigramRanking(pq, sc) })
	}
	semantic, keyword := ix.semanticRanking(pq, sc), ix.keywordRanking(pq, sc)
	wg.Wait()
	f := newFusion(ix.tuning.rrfK)
	f.addScored(semantic, ix.tuning.semantic)
	f.addScored(keyword, ix.tuning.keyword)
	if o.trigram != nil {
		f.addSlots(ix.slotsOf(*o.trigram), ix.tuning.trigram)
	} else if len(pq.tokens) > 0 {
		f.addScored(trigram, ix.tuning.trigram)
	}
	for _, e := range o.extra {
		f.addSlots(ix.slotsOf(e.ids), e.weight)
	}

	tlds := map[string]bool{}
	for _, t := range pq.tokens {
		if ix.tlds[t] > 0 {
			tlds[t] = true
		}
	}
	for t := range pq.tldOnly {
		tlds[t] = true
	}
	return ix.hits(f, pq, tlds, k)
}

// slotsOf maps ids to slots, skipping unknown IDs and repeats.
func (ix *Index) slotsOf(ids []string) []int32 {
	out := make([]int32, 0, len(ids))
	seen := make(map[int32]bool, len(ids))
	for _, id := range ids {
		if n, ok := ix.byID[id]; ok && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// inNames reports whether some label holds s: as a word, or in its
// letters. The caller holds ix.mu.
func (ix *Index) inNames(s string) bool {
	if len(ix.terms[s]) > 0 {
		return true
	}
	for _, n := range ix.substringCandidates(s) {
		if strings.Contains(ix.slots[n].label, s) {
			return true
		}
	}
	return false
}
