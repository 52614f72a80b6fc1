package namesearch

import "math"

// Segment splits a domain label into the words it was most likely made of:
// "cheapflightsnow" gives [cheap flights now], "best-coffee-shop" gives
// [best coffee shop], "247plumbing" gives [247 plumbing]. Upper case is
// folded; anything but ASCII letters and digits separates words, and digit
// runs are words of their own. Each letter run is split by maximum
// probability under a unigram model of word frequencies (a Viterbi pass over
// the run), where a piece that is no word scores below any word, less the
// longer it is, so unknown pieces ("zqx" in "zqxflights") stay whole and do
// not disturb the words around them. Time is linear in the input.
func Segment(label string) []string {
	return loadLexicon().segment(label)
}

func (lx *lexicon) segment(label string) []string {
	var words []string
	runStart := -1
	var runDigits bool
	for i := 0; i <= len(label); i++ {
		var c byte
		if i < len(label) {
			c = label[i]
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		letter, digit := 'a' <= c && c <= 'z', '0' <= c && c <= '9'
		if runStart >= 0 && (!(letter || digit) || digit != runDigits) {
			words = lx.appendRun(words, label[runStart:i], runDigits)
			runStart = -1
		}
		if runStart < 0 && (letter || digit) {
			runStart, runDigits = i, digit
		}
	}
	return words
}

func (lx *lexicon) appendRun(words []string, run string, digits bool) []string {
	run = toLower(run)
	if digits {
		return append(words, run)
	}
	_, from := lx.split(run)
	start := len(words)
	for i := len(run); i > 0; i = from[i] {
		words = append(words, run[from[i]:i])
	}
	for i, j := start, len(words)-1; i < j; i, j = i+1, j-1 {
		words[i], words[j] = words[j], words[i]
	}
	return words
}

// split is the Viterbi pass of Segment over a lower-case letter run:
// best[i] is the log probability of the best split of run[:i], less
// wordPenalty a word, and from[i] where its last word starts.
func (lx *lexicon) split(run string) (best []float64, from []int) {
	best = make([]float64, len(run)+1)
	from = make([]int, len(run)+1)
	for i := 1; i <= len(run); i++ {
		best[i] = math.Inf(-1)
		for j := max(0, i-lx.maxWordLen); j < i; j++ {
			if p := best[j] + lx.wordLogProb(run[j:i]) - wordPenalty; p > best[i] {
				best[i], from[i] = p, j
			}
		}
	}
	return best, from
}

// wordPenalty is what each word of a split costs (in nats), which prefers
// fewer, longer words where the unigram model alone would break a rarer
// word into frequent ones ("candid" rather than "can did").
const wordPenalty = 4.0

// unknownPenalty is what each letter of a piece that is no word costs (in
// nats) beyond a word seen once: an unknown piece is a last resort, and a
// long one rarer than a short one.
const unknownPenalty = 4.0

func (lx *lexicon) wordLogProb(w string) float64 {
	if p, ok := lx.logProb[w]; ok {
		return p
	}
	return lx.unknownLogProb - unknownPenalty*float64(len(w))
}

// contractionStems are pieces of contractions that the subtitle corpus
// counts as words ("don" of "don't"); as parts of a domain label they are
// almost never meant, so segmentation does not know them. ("haven", also a
// word, and a common one in names, is kept.)
var contractionStems = wordSet("s t m d ll re ve don didn doesn isn wasn aren weren couldn wouldn shouldn hasn hadn ain")

// segmentable reports whether word may be a piece of a label. One-letter
// words, and two-letter words that are neither function words nor WordNet
// lemmas ("ls", "th"), are left out: they are mostly corpus noise, and even
// "a" and "i" would split "aiwriter" into a, i, writer. A lone letter can
// still come out of Segment, as an unknown piece.
func (lx *lexicon) segmentable(word string) bool {
	switch {
	case contractionStems[word]:
		return false
	case len(word) == 1:
		return false
	case len(word) == 2:
		_, lemma := lx.senses[word]
		return lemma || isStopWord(word)
	}
	return true
}

func toLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
