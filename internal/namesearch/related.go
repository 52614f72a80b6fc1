package namesearch

import (
	"maps"
	"math"
	"slices"
	"strings"
)

// relatedWeights say how much a name word counts for a query word it is
// related to, by relation; the query word itself counts 1. Like tuning,
// they were chosen on testdata/queries-tune.tsv.
type relatedWeights struct {
	variant    float64 // another form of the same lemma: "flights" for "flight"
	synonym    float64 // a member of the same synset: "cheap" for "inexpensive"
	derived    float64 // derivationally related: "groom" for "grooming"
	similar    float64 // similar adjective, see also, attribute, pertainym
	hypernym   float64 // a broader word: "dog" for "puppy"
	hyponym    float64 // a narrower word: "jet" for "plane"; squared two levels down
	definition float64 // a content word of the definition: "fare" for "airfare"
	definedBy  float64 // a word whose definition uses this one: "airfare" for "airplane"
	example    float64 // a content word of an example sentence
	// compoundHead is the share of a related compound's weight that its
	// last word gets.
	compoundHead float64
	// senseDecay is the factor per sense rank for words whose senses were
	// never tagged in WordNet's corpus: a word's first sense counts fully,
	// its second senseDecay times as much, and so on.
	senseDecay float64
	// countPower shapes the weight of a tagged sense, its tag count relative
	// to the word's most frequent sense: ((count+1)/(max+1))^countPower.
	// "house" the building (157 tags) counts fully, "house" the verb (13)
	// far less.
	countPower float64
	// minWeight drops relations weaker than this, which bounds the work.
	minWeight float64
}

var defaultRelated = relatedWeights{
	variant:      0.9,
	synonym:      0.8,
	derived:      0.7,
	similar:      0.6,
	hypernym:     0.5,
	hyponym:      0.5,
	definition:   0.4,
	definedBy:    0.4,
	example:      0.2,
	compoundHead: 0.5,
	senseDecay:   0.7,
	countPower:   0.5,
	minWeight:    0.1,
}

// related returns the lemmas related to word with their weights, word's own
// lemmas included. Evidence adds up: a lemma reached by several relations
// scores 1 - (1-w1)(1-w2)..., so "barber" (a kind of hairdresser, and
// defined as one) ranks above "artisan" (only a broader word). Adds of the
// same weight to the same lemma count once, so that one relation met again
// through another member of a synset is not counted twice.
func (lx *lexicon) related(word string, rw relatedWeights) map[string]float64 {
	out := map[string]float64{}
	seen := map[pathKey]bool{}
	add := func(lemma string, w float64) {
		k := pathKey{lemma, w}
		if w < rw.minWeight || seen[k] {
			return
		}
		seen[k] = true
		out[lemma] = 1 - (1-out[lemma])*(1-min(w, 1))
	}
	addMembers := func(s *synset, tgt uint8, w float64) {
		for i, m := range s.members {
			if tgt == 0 || int(tgt) == i+1 {
				add(m.lemma, w*lx.senseWeight(m, rw))
			}
		}
	}
	lemmas := lx.lemmas(word)
	top := 0
	for _, l := range lemmas {
		top = max(top, lx.maxCount[l])
	}
	for _, lemma := range lemmas {
		// A lemma counts by how common it is next to the word's other
		// lemmas: "pipes" is mostly pipe, hardly pip.
		base := math.Pow(float64(lx.maxCount[lemma]+1)/float64(top+1), rw.countPower)
		if lemma != word {
			base *= rw.variant
		}
		add(lemma, base)
		for _, id := range lx.senses[lemma] {
			s := &lx.synsets[id]
			self := s.memberNumber(lemma)
			f := base * lx.senseWeight(s.members[self-1], rw)
			if f < rw.minWeight {
				continue
			}
			for _, m := range s.members {
				add(m.lemma, f*rw.synonym)
				w := f * rw.definedBy
				if m.lemma != lemma {
					w *= rw.synonym
				}
				lx.addDefinedBy(add, m.lemma, w, rw)
			}
			for _, d := range s.def {
				add(d, f*rw.definition*lx.specificity(d))
			}
			for _, e := range s.examples {
				add(e, f*rw.example)
			}
			for _, l := range s.links {
				if l.src != 0 && int(l.src) != self {
					continue
				}
				t := &lx.synsets[l.target]
				switch l.rel {
				case '+':
					addMembers(t, l.tgt, f*rw.derived)
				case '&', '^', '=', '\\':
					addMembers(t, l.tgt, f*rw.similar)
				case '@':
					addMembers(t, 0, f*rw.hypernym)
				case '~':
					addMembers(t, 0, f*rw.hyponym)
					for _, l2 := range t.links {
						if l2.rel == '~' && f*rw.hyponym*rw.hyponym >= rw.minWeight {
							addMembers(&lx.synsets[l2.target], 0, f*rw.hyponym*rw.hyponym)
						}
					}
				}
			}
		}
	}
	// A related compound lends its weight, reduced, to its last word, which
	// names what it is: labels drop the rest ("low_budget", similar to
	// "inexpensive", gives "budget" in budgetairfare).
	// (In sorted order: evidence is combined in floating point, whose
	// rounding depends on the order, and ties are broken by exact scores.)
	for _, lemma := range slices.Sorted(maps.Keys(out)) {
		if i := strings.LastIndexByte(lemma, '_'); i >= 0 {
			add(lemma[i+1:], out[lemma]*rw.compoundHead)
		}
	}
	return out
}

type pathKey struct {
	lemma  string
	weight float64
}

// addDefinedBy adds the members of synsets whose definition uses lemma.
func (lx *lexicon) addDefinedBy(add func(string, float64), lemma string, w float64, rw relatedWeights) {
	if w *= lx.specificity(lemma); w < rw.minWeight {
		return
	}
	for _, id := range lx.definedBy[lemma] {
		for _, m := range lx.synsets[id].members {
			add(m.lemma, w*lx.senseWeight(m, rw))
		}
	}
}

// specificity is how much a definition that uses lemma says about it,
// from 0 to 1: an inverse document frequency over definitions, scaled by
// its largest value. "airplane" (in few definitions) is specific,
// "work" or "person" (in thousands) is not.
func (lx *lexicon) specificity(lemma string) float64 {
	n := float64(len(lx.synsets))
	df := float64(max(1, len(lx.definedBy[lemma])))
	return math.Log(n/df) / math.Log(n)
}

// memberNumber is the 1-based position of lemma among s's members.
func (s *synset) memberNumber(lemma string) int {
	for i, m := range s.members {
		if m.lemma == lemma {
			return i + 1
		}
	}
	return 0
}

// senseWeight is how much the sense m of its lemma counts: by tag counts
// if the lemma has any, else by sense rank.
func (lx *lexicon) senseWeight(m member, rw relatedWeights) float64 {
	if top := lx.maxCount[m.lemma]; top > 0 {
		return math.Pow(float64(m.count+1)/float64(top+1), rw.countPower)
	}
	return math.Pow(rw.senseDecay, float64(min(m.sense, 20)-1))
}
