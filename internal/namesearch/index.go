package namesearch

import (
	"slices"
	"strings"
	"sync"
)

// Entry is one listed domain name.
type Entry struct {
	// ID identifies the listing to the caller; Search returns it.
	ID string
	// Domain is the lower-case ASCII name, "cheapflightsnow.com". The label
	// left of the first dot is what is searched; the rest is the TLD, which
	// a query may prefer ("coffee shop io").
	Domain string
}

// Hit is one search result.
type Hit struct {
	ID     string
	Domain string
	// Score is the entry's fused reciprocal-rank score, higher better. It
	// orders the hits of one search, except that a hit may be put behind
	// worse ones so that the first hits are not all one idea (see
	// Index.Search); it means nothing across searches.
	Score float64
}

// Index is an in-memory search index over domain names. It is safe for
// concurrent use: any number of searches run at once, and Add or Remove
// waits for the searches under way, then holds them off while it applies
// (at 100,000 entries, well under a millisecond; Add segments the label
// before it takes the lock).
type Index struct {
	lx     *lexicon
	tuning tuning

	mu    sync.RWMutex
	slots []slot // entries by slot number; a removed entry's slot is reused
	// sizes are the slots' counts of words and trigrams, apart from the
	// slots: the rankers read them for every label a query touches, and
	// at a million labels the slots' 136 bytes each are a cache miss a
	// read, these 4 bytes seldom.
	sizes []slotSize
	free  []int32          // slots of removed entries
	byID  map[string]int32 // ID -> slot
	// terms maps each word of a label, its lemmas and the WordNet compounds
	// of adjacent words ("coffee_shop") to the slots of the labels.
	terms map[string][]int32
	// grams maps each trigram (packed by trigramKey) to the slots of the
	// labels that have it.
	grams map[uint32][]int32
	tlds  map[string]int // TLD -> number of entries

	scratch sync.Pool // *scratch sized for the slots
}

type slot struct {
	id     string
	domain string
	label  string // the part left of the first dot, without hyphens
	tld    string // the part right of the first dot
	words  []string
	terms  []string
	grams  []uint32
}

// slotSize is how many words and distinct trigrams a slot's label has.
type slotSize struct{ words, grams uint16 }

// New returns an index of entries; a repeated ID keeps its last entry. The
// first New (or Segment) in a process also parses the embedded lexicon,
// about half a second and 55 MB; later calls share it.
func New(entries []Entry) *Index {
	ix := &Index{
		lx:     loadLexicon(),
		tuning: defaultTuning,
		byID:   make(map[string]int32, len(entries)),
		terms:  map[string][]int32{},
		grams:  map[uint32][]int32{},
		tlds:   map[string]int{},
	}
	ix.slots, ix.sizes = make([]slot, 0, len(entries)), make([]slotSize, 0, len(entries))
	for _, e := range entries {
		ix.add(e)
	}
	return ix
}

// Len returns the number of entries.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.byID)
}

// Add adds an entry, or replaces the entry with the same ID.
func (ix *Index) Add(e Entry) {
	s := ix.prepare(e)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.remove(e.ID)
	ix.insert(s)
}

// Remove removes the entry with the given ID; an unknown ID is no error.
func (ix *Index) Remove(id string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.remove(id)
}

func (ix *Index) add(e Entry) {
	ix.remove(e.ID)
	ix.insert(ix.prepare(e))
}

// prepare does the work of an Add that needs no lock: segmentation,
// lemmas and trigrams.
func (ix *Index) prepare(e Entry) slot {
	domain := toLower(e.Domain)
	label, tld, _ := strings.Cut(domain, ".")
	s := slot{id: e.ID, domain: domain, label: strings.ReplaceAll(label, "-", ""), tld: tld}
	s.words = ix.lx.segment(label)
	s.terms = ix.lx.terms(s.words)
	s.grams = trigrams(s.label, nil)
	return s
}

func (ix *Index) insert(s slot) {
	var n int32
	size := slotSize{words: uint16(len(s.words)), grams: uint16(len(s.grams))}
	if k := len(ix.free); k > 0 {
		n, ix.free = ix.free[k-1], ix.free[:k-1]
		ix.slots[n], ix.sizes[n] = s, size
	} else {
		n = int32(len(ix.slots))
		ix.slots, ix.sizes = append(ix.slots, s), append(ix.sizes, size)
	}
	ix.byID[s.id] = n
	for _, t := range s.terms {
		ix.terms[t] = append(ix.terms[t], n)
	}
	for _, g := range s.grams {
		ix.grams[g] = append(ix.grams[g], n)
	}
	ix.tlds[s.tld]++
}

func (ix *Index) remove(id string) {
	n, ok := ix.byID[id]
	if !ok {
		return
	}
	s := &ix.slots[n]
	for _, t := range s.terms {
		if p := deletePosting(ix.terms[t], n); len(p) > 0 {
			ix.terms[t] = p
		} else {
			delete(ix.terms, t)
		}
	}
	for _, g := range s.grams {
		if p := deletePosting(ix.grams[g], n); len(p) > 0 {
			ix.grams[g] = p
		} else {
			delete(ix.grams, g)
		}
	}
	if ix.tlds[s.tld]--; ix.tlds[s.tld] == 0 {
		delete(ix.tlds, s.tld)
	}
	delete(ix.byID, id)
	*s, ix.sizes[n] = slot{}, slotSize{}
	ix.free = append(ix.free, n)
}

// deletePosting removes n from a posting list; the order of a list does not
// matter.
func deletePosting(list []int32, n int32) []int32 {
	for i, x := range list {
		if x == n {
			list[i] = list[len(list)-1]
			return list[:len(list)-1]
		}
	}
	return list
}

// terms returns what a label's words are indexed under: each word, its
// lemmas, and the compounds its adjacent words form, each once.
func (lx *lexicon) terms(words []string) []string {
	var out []string
	for _, w := range words {
		out = appendNew(out, w)
		for _, l := range lx.lemmas(w) {
			out = appendNew(out, l)
		}
	}
	for _, c := range lx.compounds(words) {
		out = appendNew(out, c)
	}
	return out
}

// compounds returns the WordNet lemmas that two or three adjacent words
// form, the last word in any of its lemmas: "coffee_shop" for coffee, shop
// or for coffee, shops, and "alehouse" for ale, house.
func (lx *lexicon) compounds(words []string) []string {
	var out []string
	for i := 1; i < len(words); i++ {
		for _, c := range lx.compoundsEndingAt(words, i) {
			out = appendNew(out, c.lemma)
		}
	}
	return out
}

// compound is a WordNet lemma spelt by the words from start to an end.
type compound struct {
	lemma string
	start int
}

// compoundsEndingAt returns the compounds whose last word is words[i],
// longest first.
func (lx *lexicon) compoundsEndingAt(words []string, i int) []compound {
	var out []compound
	for start := max(0, i-2); start < i; start++ {
		for _, l := range lx.lemmas(words[i]) {
			head := words[start:i]
			for _, c := range []string{strings.Join(head, "_") + "_" + l, strings.Join(head, "") + l} {
				if lx.senses[c] != nil {
					out = append(out, compound{c, start})
				}
			}
		}
	}
	return out
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
