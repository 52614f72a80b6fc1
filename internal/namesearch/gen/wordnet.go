package main

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// posFiles are WordNet's part-of-speech files in the order synsets are
// numbered in the output. Adjective satellites ("s") live in data.adj.
var posFiles = []struct{ letter, name string }{
	{"n", "noun"}, {"v", "verb"}, {"a", "adj"}, {"r", "adv"},
}

// keptPointers are the relations the search follows: hypernym, similar to,
// see also, derivationally related form, pertainym and attribute. Every one
// is a single character in the output. Hyponyms are left out because each is
// the inverse of a hypernym pointer, and of the symmetric relations
// (symmetric) only the direction from the lower synset number is written:
// the reader adds the inverses.
var keptPointers = map[string]bool{"@": true, "&": true, "^": true, "+": true, `\`: true, "=": true}

var symmetric = map[string]bool{"&": true, "+": true, "=": true}

// senseKey names a sense as cntlist.rev counts it: lemma, part of speech
// and sense number within it.
type senseKey struct {
	lemma string
	pos   string
	sense int
}

type synsetKey struct {
	pos    string // n, v, a or r
	offset int
}

type pointer struct {
	symbol string
	target synsetKey
	// src and tgt are 1-based member numbers for lexical pointers, 0 for
	// pointers between whole synsets.
	src, tgt int
}

type synset struct {
	key      synsetKey
	members  []string // normalised; "" where the original member is dropped
	pointers []pointer
	gloss    string
}

type wordNet struct {
	synsets    []*synset // in output order
	tagCounts  map[senseKey]int
	byKey      map[synsetKey]int
	senses     map[string][]synsetKey // lemma -> synsets in sense order, noun first
	exceptions [][2]string            // inflected form, lemma
}

func readWordNet(dir string) (*wordNet, error) {
	wn := &wordNet{byKey: map[synsetKey]int{}, senses: map[string][]synsetKey{}, tagCounts: map[senseKey]int{}}
	for _, pf := range posFiles {
		if err := readLines(filepath.Join(dir, "data."+pf.name), func(line string) error {
			if strings.HasPrefix(line, "  ") {
				return nil // licence header
			}
			s, err := parseDataLine(pf.letter, line)
			if err != nil {
				return err
			}
			wn.byKey[s.key] = len(wn.synsets)
			wn.synsets = append(wn.synsets, s)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	for _, pf := range posFiles {
		if err := readLines(filepath.Join(dir, "index."+pf.name), func(line string) error {
			if strings.HasPrefix(line, "  ") {
				return nil
			}
			lemma, offsets, err := parseIndexLine(line)
			if err != nil {
				return err
			}
			if lemma = normalizeLemma(lemma); lemma == "" {
				return nil
			}
			for _, o := range offsets {
				k := synsetKey{pf.letter, o}
				if !slices.Contains(wn.senses[lemma], k) {
					wn.senses[lemma] = append(wn.senses[lemma], k)
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if err := readLines(filepath.Join(dir, pf.name+".exc"), func(line string) error {
			f := strings.Fields(line)
			for _, lemma := range f[1:] {
				if isPlainWord(f[0]) && isPlainWord(lemma) && f[0] != lemma {
					wn.exceptions = append(wn.exceptions, [2]string{f[0], lemma})
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	// cntlist.rev: sense_key sense_number tag_cnt, the sense key being
	// lemma%ss_type:lex_filenum:lex_id:head_word:head_id.
	ssType := map[string]string{"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}
	if err := readLines(filepath.Join(dir, "cntlist.rev"), func(line string) error {
		f := strings.Fields(line)
		if len(f) != 3 {
			return errors.New("bad count line")
		}
		lemma, rest, ok := strings.Cut(f[0], "%")
		sense, err1 := atoi(f[1], 10)
		count, err2 := atoi(f[2], 10)
		if !ok || len(rest) == 0 || errors.Join(err1, err2) != nil {
			return fmt.Errorf("bad count line %q", line)
		}
		if lemma = normalizeLemma(lemma); lemma != "" {
			wn.tagCounts[senseKey{lemma, ssType[rest[:1]], sense}] += count
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return wn, nil
}

// parseDataLine parses one synset of a data.* file:
// offset lex_filenum ss_type w_cnt (word lex_id){w_cnt} p_cnt (ptr){p_cnt} [frames] | gloss
func parseDataLine(pos, line string) (*synset, error) {
	head, gloss, ok := strings.Cut(line, " | ")
	if !ok {
		return nil, errors.New("no gloss")
	}
	f := strings.Fields(head)
	if len(f) < 4 {
		return nil, errors.New("short synset line")
	}
	offset, err := atoi(f[0], 10)
	if err != nil {
		return nil, err
	}
	s := &synset{key: synsetKey{pos, offset}, gloss: strings.TrimSpace(gloss)}
	nWords, err := atoi(f[3], 16)
	if err != nil {
		return nil, err
	}
	i := 4
	for range nWords {
		if i+1 >= len(f) {
			return nil, errors.New("short word list")
		}
		s.members = append(s.members, normalizeLemma(f[i]))
		i += 2
	}
	if i >= len(f) {
		return nil, errors.New("no pointer count")
	}
	nPtrs, err := atoi(f[i], 10)
	if err != nil {
		return nil, err
	}
	i++
	for range nPtrs {
		if i+3 >= len(f) {
			return nil, errors.New("short pointer list")
		}
		sym, targetPos, srcTgt := f[i], f[i+2], f[i+3]
		target, err := atoi(f[i+1], 10)
		if err != nil {
			return nil, err
		}
		i += 4
		if !keptPointers[sym] {
			continue
		}
		if targetPos == "s" {
			targetPos = "a"
		}
		src, err1 := atoi(srcTgt[:2], 16)
		tgt, err2 := atoi(srcTgt[2:], 16)
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		s.pointers = append(s.pointers, pointer{sym, synsetKey{targetPos, target}, src, tgt})
	}
	return s, nil
}

// parseIndexLine parses lemma pos synset_cnt p_cnt (ptr_symbol){p_cnt}
// sense_cnt tagsense_cnt (synset_offset){synset_cnt}; the offsets are in
// sense order, most frequent sense first.
func parseIndexLine(line string) (string, []int, error) {
	f := strings.Fields(line)
	if len(f) < 4 {
		return "", nil, errors.New("short index line")
	}
	nSynsets, err := atoi(f[2], 10)
	if err != nil {
		return "", nil, err
	}
	if nSynsets > len(f) {
		return "", nil, errors.New("bad synset count")
	}
	offsets := make([]int, 0, nSynsets)
	for _, o := range f[len(f)-nSynsets:] {
		n, err := atoi(o, 10)
		if err != nil {
			return "", nil, err
		}
		offsets = append(offsets, n)
	}
	return f[0], offsets, nil
}

// normalizeLemma lower-cases a WordNet word, drops an adjective marker such
// as "(a)", and writes compounds with "_" ("coffee_shop", "cut_rate"). Words
// that cannot be spelt in a domain label, or compounds of more than three
// words, give "".
func normalizeLemma(w string) string {
	if i := strings.IndexByte(w, '('); i >= 0 {
		w = w[:i]
	}
	w = strings.ToLower(strings.ReplaceAll(w, "-", "_"))
	parts := strings.Split(w, "_")
	if len(parts) > 3 {
		return ""
	}
	for _, p := range parts {
		if !isPlainWord(p) {
			return ""
		}
	}
	return w
}

// encode writes the subset the search reads, one record a line:
//
//	S <pos> <members> <pointers> <definition words> <example words>
//	X <inflected form> <lemma>
//
// fields separated by tabs, list items by spaces. Synsets are numbered by
// their S line, from 0, and kept only if a member is a word of the frequency
// list (compounds: every part is). A member is written with its sense number
// and, if the sense was seen in WordNet's tagged corpus, its tag count
// ("plane.1.21"): the number is the synset's rank among the lemma's senses
// of that part of speech, most frequent first, as the index files order
// them; the count comes from cntlist.rev.
// A pointer is its symbol followed by the target number and, for lexical
// pointers, ".src.tgt" member numbers (1-based). Gloss words are the a-z
// tokens of the gloss that are words of the frequency list or WordNet
// lemmas, each once, in order; quoted examples are kept apart from the
// definition.
func (wn *wordNet) encode(freq map[string]int) []byte {
	known := func(lemma string) bool {
		for _, w := range strings.Split(lemma, "_") {
			if _, ok := freq[w]; !ok {
				return false
			}
		}
		return lemma != ""
	}
	for _, s := range wn.synsets {
		for i, m := range s.members {
			if !known(m) {
				s.members[i] = ""
			}
		}
	}
	number := map[synsetKey]int{}
	var kept []*synset
	for _, s := range wn.synsets {
		if slices.ContainsFunc(s.members, func(m string) bool { return m != "" }) {
			number[s.key] = len(kept)
			kept = append(kept, s)
		}
	}
	common := mostFrequent(freq, commonWords)
	vocab := func(w string) bool { return known(w) && !common[w] }

	var b bytes.Buffer
	for _, s := range kept {
		var members []string
		renumber := make([]int, len(s.members)+1)
		for i, m := range s.members {
			if m != "" {
				sense := wn.senseNumber(m, s.key)
				member := fmt.Sprintf("%s.%d", m, sense)
				if c := wn.tagCounts[senseKey{m, s.key.pos, sense}]; c > 0 {
					member += fmt.Sprintf(".%d", c)
				}
				members = append(members, member)
				renumber[i+1] = len(members)
			}
		}
		var ptrs []string
		for _, p := range s.pointers {
			t, ok := number[p.target]
			if !ok || symmetric[p.symbol] && t < number[s.key] {
				continue
			}
			if p.src == 0 && p.tgt == 0 {
				ptrs = append(ptrs, fmt.Sprintf("%s%d", p.symbol, t))
				continue
			}
			target := wn.synsets[wn.byKey[p.target]]
			if p.src > len(s.members) || p.tgt > len(target.members) || renumber[p.src] == 0 || target.members[p.tgt-1] == "" {
				continue
			}
			ptrs = append(ptrs, fmt.Sprintf("%s%d.%d.%d", p.symbol, t, renumber[p.src], targetMemberNumber(target, p.tgt)))
		}
		def, examples := splitGloss(s.gloss)
		fmt.Fprintf(&b, "S\t%s\t%s\t%s\t%s\t%s\n", s.key.pos, strings.Join(members, " "), strings.Join(ptrs, " "),
			strings.Join(glossWords(def, vocab), " "), strings.Join(glossWords(examples, vocab), " "))
	}

	exc := slices.Clone(wn.exceptions)
	slices.SortFunc(exc, func(a, b [2]string) int { return strings.Compare(a[0]+" "+a[1], b[0]+" "+b[1]) })
	exc = slices.Compact(exc)
	for _, e := range exc {
		fmt.Fprintf(&b, "X\t%s\t%s\n", e[0], e[1])
	}
	return b.Bytes()
}

// senseNumber is the 1-based rank of synset k among the senses of lemma in
// k's part of speech.
func (wn *wordNet) senseNumber(lemma string, k synsetKey) int {
	n := 0
	for _, sk := range wn.senses[lemma] {
		if sk.pos == k.pos {
			n++
			if sk == k {
				return n
			}
		}
	}
	return n + 1 // not in the index under this spelling: after its senses
}

// targetMemberNumber maps a 1-based member number of s to its number among
// the members that survive normalisation.
func targetMemberNumber(s *synset, n int) int {
	k := 0
	for _, m := range s.members[:n] {
		if m != "" {
			k++
		}
	}
	return k
}

// splitGloss separates a gloss into its definition and its quoted examples.
func splitGloss(gloss string) (def, examples string) {
	var d, e strings.Builder
	quoted := false
	for _, r := range gloss {
		if r == '"' {
			quoted = !quoted
			d.WriteByte(' ')
			e.WriteByte(' ')
			continue
		}
		if quoted {
			e.WriteRune(r)
		} else {
			d.WriteRune(r)
		}
	}
	return d.String(), e.String()
}

func glossWords(text string, vocab func(string) bool) []string {
	seen := map[string]bool{}
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if !seen[w] && vocab(w) {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// commonWords is how many of the most frequent words are left out of
// glosses: they are function words ("the", "of", "which") that say nothing
// about a synset.
const commonWords = 150

func mostFrequent(freq map[string]int, n int) map[string]bool {
	words := make([]string, 0, len(freq))
	for w := range freq {
		words = append(words, w)
	}
	slices.SortFunc(words, func(a, b string) int {
		if freq[a] != freq[b] {
			return freq[b] - freq[a]
		}
		return strings.Compare(a, b)
	})
	top := map[string]bool{}
	for _, w := range words[:min(n, len(words))] {
		top[w] = true
	}
	return top
}
