package namesearch

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// The independent evaluation: testdata/paraphrase holds pairs of a name
// and what a buyer might type for it in other words, written by a session
// that saw neither the ranker's code nor its output (README.md there). It
// is judged over paraphraseInventory names: sample names, the set's names,
// and neighbours that repeat one word of a query literally.
const (
	paraphraseInventory = 100_000
	// neighboursPerWord is how many names repeat each word of each query
	// (half with the word first, half last).
	neighboursPerWord = 12
)

// Floors of TestParaphraseRecall on all pairs: what the search reached
// when the set was first measured (2026-11-26: paraphrases recall@5 0.0022,
// MRR 0.0007; keywords 1.000), so that no change goes below it. The
// targets of the paraphrase search (recall@5 0.90, MRR 0.75) are far
// above: the neighbours, which repeat one word of a query literally, take
// every first place.
const (
	paraphraseRecallFloor = 0.0022
	paraphraseMRRFloor    = 0.0005
	keywordRecallFloor    = 1.0
)

// pair is one line of the set: a name and a query for it.
type pair struct {
	category, name, query string
	heldOut               bool
}

// heldOutName is the split of the set, fixed by its README: a pair is held
// out when the FNV-1a 32-bit hash of its name is 0 modulo 3.
func heldOutName(name string) bool {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32()%3 == 0
}

func readPairs(tb testing.TB) (para, kw []pair) {
	tb.Helper()
	for _, f := range readTSV(tb, "testdata/paraphrase/pairs.tsv", 3) {
		para = append(para, pair{category: f[0], name: f[1], query: f[2], heldOut: heldOutName(f[1])})
	}
	for _, f := range readTSV(tb, "testdata/paraphrase/keywords.tsv", 2) {
		kw = append(kw, pair{name: f[0], query: f[1], heldOut: heldOutName(f[0])})
	}
	return para, kw
}

// paraphraseIndex is the inventory the set is judged over: sample names,
// the set's names, and for every word of every query neighboursPerWord
// names that hold the word next to another word of the sample names, one
// that shares no stem with the query, padded with sample names to
// paraphraseInventory. The neighbours are made without the ranker's
// lexicon (what it finds related is not what it is judged by): now and
// then one may say both of a query's ideas, as real neighbours would.
func paraphraseIndex(tb testing.TB, para []pair) *Index {
	tb.Helper()
	lx := loadLexicon()
	rng := rand.New(rand.NewPCG(29, 100_000))
	sample := SampleInventory(paraphraseInventory, 29)
	var vocabulary []string
	seenWord := map[string]bool{}
	for _, d := range sample[:20_000] {
		label, _, _ := strings.Cut(d, ".")
		for _, w := range lx.segment(label) {
			if len(w) >= 3 && !seenWord[w] && !isStopWord(w) {
				seenWord[w] = true
				vocabulary = append(vocabulary, w)
			}
		}
	}
	slices.Sort(vocabulary)
	domains := map[string]bool{}
	for _, p := range para {
		domains[p.name] = true
	}
	for _, p := range para {
		var words []string
		for _, w := range strings.Fields(p.query) {
			if len(w) >= 3 && !isStopWord(w) {
				words = append(words, w)
			}
		}
		for _, w := range words {
			for i := 0; i < neighboursPerWord; {
				other := vocabulary[rng.IntN(len(vocabulary))]
				if slices.ContainsFunc(words, func(q string) bool { return sharesStem(q, other) }) {
					continue
				}
				d := w + other + ".com"
				if i%2 == 1 {
					d = other + w + ".com"
				}
				if !domains[d] {
					domains[d] = true
					i++
				}
			}
		}
	}
	for _, d := range sample {
		if len(domains) >= paraphraseInventory {
			break
		}
		domains[d] = true
	}
	list := make([]string, 0, len(domains))
	for d := range domains {
		list = append(list, d)
	}
	slices.Sort(list)
	return New(entriesOf(list...))
}

// sharesStem reports whether a and b begin alike (four letters, or all
// of the shorter).
func sharesStem(a, b string) bool {
	n := min(4, len(a), len(b))
	return a[:n] == b[:n]
}

// paraphraseScores are recall@5 and MRR of queries for their one name,
// by "kind half", with the misses and each search's latency.
func paraphraseScores(ix *Index, kind string, pairs []pair, ms scores, misses *[]string, took *[]time.Duration) {
	for _, p := range pairs {
		start := time.Now()
		hits := ix.Search(p.query, DefaultLimit)
		*took = append(*took, time.Since(start))
		rank := 0
		for i, h := range hits {
			if h.Domain == p.name {
				rank = i + 1
				break
			}
		}
		if half := ms.add(kind, p.heldOut, rank); rank == 0 && half == "tune" { // the held-out misses are not looked at
			var got []string
			for _, h := range hits {
				got = append(got, h.Domain)
			}
			*misses = append(*misses, fmt.Sprintf("miss %-4s %-14s %-32q want %-24s got %v", kind, p.category, p.query, p.name, got))
		}
	}
}

// TestParaphraseRecall prints recall@5, MRR and the latency of the
// independent set's queries, on its tuning part, its held-out part and
// all of it, and fails below the floors. Only the tuning part's misses are
// printed: the held-out part is never tuned to.
func TestParaphraseRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an index of 100,000 names")
	}
	para, kw := readPairs(t)
	ix := paraphraseIndex(t, para)
	ms := scores{}
	var misses []string
	var took []time.Duration
	paraphraseScores(ix, "para", para, ms, &misses, &took)
	paraphraseScores(ix, "kw", kw, ms, &misses, &took)
	for _, m := range misses {
		t.Log(m)
	}
	for _, kind := range []string{"para", "kw"} {
		for _, half := range []string{"tune", "held-out", "all"} {
			m := ms[kind+" "+half]
			t.Logf("%-4s %-8s n=%3d  recall@5=%.4f  MRR=%.4f", kind, half, m.n, m.recall(), m.mrr())
		}
	}
	slices.Sort(took)
	t.Logf("%d names; %d searches: p50 %v, p99 %v", ix.Len(), len(took), took[len(took)/2], took[len(took)*99/100])
	if m := ms["para all"]; m.recall() < paraphraseRecallFloor || m.mrr() < paraphraseMRRFloor {
		t.Errorf("paraphrase recall@5 %.3f, MRR %.3f; want at least %.4f and %.4f", m.recall(), m.mrr(), paraphraseRecallFloor, paraphraseMRRFloor)
	}
	if r := ms["kw all"].recall(); r < keywordRecallFloor {
		t.Errorf("keyword recall@5 %.3f, want at least %.2f", r, keywordRecallFloor)
	}
}
