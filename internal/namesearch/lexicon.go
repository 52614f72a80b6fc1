package namesearch

import (
	"cmp"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The lexicon is built by ./gen from packaged sources; data/README.md says
// which and how.
//
//go:embed data/words.txt.gz data/wordnet.txt.gz
var dataFS embed.FS

// lexicon is the read-only language data every Index shares: word
// probabilities for segmentation and the WordNet subset for related words.
type lexicon struct {
	// logProb is the natural log of each word's relative frequency.
	logProb map[string]float64
	// unknownLogProb is the log probability of a word seen once in the
	// corpus; an unknown piece of a label scores below it (see Segment).
	unknownLogProb float64
	maxWordLen     int

	synsets []synset
	// senses lists a lemma's synsets, nouns first then verbs, adjectives and
	// adverbs, each part of speech most frequent sense first.
	senses map[string][]int32
	// definedBy lists the synsets whose definition uses a lemma: the
	// reverse of synset.def, so that "plane" reaches "airfare" ("the fare
	// charged for traveling by airplane").
	definedBy  map[string][]int32
	exceptions map[string][]string // irregular form -> lemmas
	// maxCount is the largest tag count of a lemma's senses, 0 if none was
	// tagged.
	maxCount map[string]int
	// compoundWords are the words of WordNet's compounds ("hatha" of
	// hatha_yoga): words, though not lemmas of their own.
	compoundWords map[string]bool
}

type synset struct {
	pos      byte // 'n', 'v', 'a' or 'r'
	members  []member
	links    []link
	def      []string // lemmas of the definition's content words
	examples []string // lemmas of the quoted examples' content words
}

type member struct {
	lemma string
	sense int // rank among the lemma's senses of this part of speech, from 1
	count int // times the sense was tagged in WordNet's semantic concordance
}

// link is a WordNet pointer. For lexical pointers (derivations) src and tgt
// are 1-based member numbers; 0 means the whole synset.
type link struct {
	rel      byte // '@' hypernym, '~' hyponym, '&' similar, '^' also, '+' derivation, '\\' pertainym, '=' attribute
	target   int32
	src, tgt uint8
}

// inverse gives the relation read from the other end; the data file writes
// one direction only. WordNet has pertainyms from adjective to noun only
// ("dental" pertains to "tooth"); the search reads them both ways.
var inverse = map[byte]byte{'@': '~', '&': '&', '+': '+', '=': '=', '\\': '\\'}

// loadLexicon parses the embedded data once, on first use; every Index and
// Segment call after that shares the result.
var loadLexicon = sync.OnceValue(func() *lexicon {
	lx, err := parseLexicon(dataFS)
	if err != nil {
		panic("namesearch: embedded data: " + err.Error()) // the build embeds it; a failure is a broken build
	}
	return lx
})

func parseLexicon(fsys embed.FS) (*lexicon, error) {
	lx := &lexicon{
		logProb:       map[string]float64{},
		senses:        map[string][]int32{},
		definedBy:     map[string][]int32{},
		exceptions:    map[string][]string{},
		maxCount:      map[string]int{},
		compoundWords: map[string]bool{},
	}
	if err := readGzipLines(fsys, "data/wordnet.txt.gz", lx.parseWordNetLine); err != nil {
		return nil, err
	}
	lx.finishWordNet()
	for lemma := range lx.senses {
		if strings.IndexByte(lemma, '_') >= 0 {
			for w := range strings.SplitSeq(lemma, "_") {
				lx.compoundWords[w] = true
			}
		}
	}
	counts := map[string]float64{}
	var total float64
	if err := readGzipLines(fsys, "data/words.txt.gz", func(line string) error {
		word, count, ok := strings.Cut(line, " ")
		n, err := strconv.ParseFloat(count, 64)
		if !ok || err != nil {
			return fmt.Errorf("bad frequency line %q", line)
		}
		total += n
		if lx.segmentable(word) {
			counts[word] = n
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for w, n := range counts {
		lx.logProb[w] = math.Log(n / total)
		lx.maxWordLen = max(lx.maxWordLen, len(w))
	}
	lx.unknownLogProb = math.Log(1 / total)
	return lx, nil
}

func readGzipLines(fsys embed.FS, name string, fn func(string) error) error {
	f, err := fsys.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	// The words of the lexicon are substrings of this one string, which
	// stays as long as they do.
	for rest := string(data); rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if err := fn(line); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// parseWordNetLine reads one record of the format gen documents:
// "S pos members pointers definition examples" or "X form lemma".
func (lx *lexicon) parseWordNetLine(line string) error {
	f := strings.Split(line, "\t")
	switch {
	case f[0] == "X" && len(f) == 3:
		lx.exceptions[f[1]] = append(lx.exceptions[f[1]], f[2])
		return nil
	case f[0] == "S" && len(f) == 6 && len(f[1]) == 1:
	default:
		return fmt.Errorf("bad record %q", line)
	}
	s := synset{pos: f[1][0], def: strings.Fields(f[4]), examples: strings.Fields(f[5])}
	for _, m := range strings.Fields(f[2]) {
		parts := strings.Split(m, ".")
		var sense, count int
		var err error
		if len(parts) >= 2 {
			sense, err = strconv.Atoi(parts[1])
		}
		if err == nil && len(parts) == 3 {
			count, err = strconv.Atoi(parts[2])
		}
		if err != nil || len(parts) < 2 || len(parts) > 3 {
			return fmt.Errorf("bad member %q", m)
		}
		s.members = append(s.members, member{parts[0], sense, count})
		lx.maxCount[parts[0]] = max(lx.maxCount[parts[0]], count)
	}
	for _, p := range strings.Fields(f[3]) {
		var src, tgt int
		nums := strings.Split(p[1:], ".")
		t, err := strconv.Atoi(nums[0])
		if err == nil && len(nums) == 3 {
			src, err = strconv.Atoi(nums[1])
			if err == nil {
				tgt, err = strconv.Atoi(nums[2])
			}
		}
		if err != nil || (len(nums) != 1 && len(nums) != 3) {
			return fmt.Errorf("bad pointer %q", p)
		}
		s.links = append(s.links, link{rel: p[0], target: int32(t), src: uint8(src), tgt: uint8(tgt)})
	}
	lx.synsets = append(lx.synsets, s)
	return nil
}

// finishWordNet adds the inverse pointers, orders each lemma's senses,
// lemmatises gloss words and indexes definitions by the lemmas they use.
func (lx *lexicon) finishWordNet() {
	posRank := map[byte]int{'n': 0, 'v': 1, 'a': 2, 'r': 3}
	type sense struct {
		id        int32
		pos, rank int
	}
	type inverseLink struct {
		from int32
		link link
	}
	var inverses []inverseLink
	senses := map[string][]sense{}
	for id := range lx.synsets {
		s := &lx.synsets[id]
		for _, l := range s.links {
			if inv, ok := inverse[l.rel]; ok && int(l.target) < len(lx.synsets) {
				inverses = append(inverses, inverseLink{l.target, link{rel: inv, target: int32(id), src: l.tgt, tgt: l.src}})
			}
		}
		for _, m := range s.members {
			senses[m.lemma] = append(senses[m.lemma], sense{int32(id), posRank[s.pos], m.sense})
		}
	}
	for _, inv := range inverses {
		s := &lx.synsets[inv.from]
		s.links = append(s.links, inv.link)
	}
	for lemma, ss := range senses {
		slices.SortFunc(ss, func(a, b sense) int {
			return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(a.rank, b.rank), cmp.Compare(a.id, b.id))
		})
		ids := make([]int32, len(ss))
		for i, s := range ss {
			ids[i] = s.id
		}
		lx.senses[lemma] = ids
	}
	base := map[string]string{}
	lemmatize := func(words []string) []string {
		out := words[:0]
		for _, w := range words {
			b, ok := base[w]
			if !ok {
				b = lx.lemmas(w)[0]
				base[w] = b
			}
			if !isStopWord(b) {
				out = append(out, b)
			}
		}
		return out
	}
	for id := range lx.synsets {
		s := &lx.synsets[id]
		s.def = lemmatize(s.def)
		s.examples = lemmatize(s.examples)
		for _, w := range s.def {
			if d := lx.definedBy[w]; len(d) == 0 || d[len(d)-1] != int32(id) {
				lx.definedBy[w] = append(d, int32(id))
			}
		}
	}
}
