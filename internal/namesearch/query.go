package namesearch

import (
	"slices"
	"strings"
)

// Query limits: a longer query is cut, so hostile input costs no more than
// a long honest one.
const (
	// MaxQueryBytes is how much of a query is read.
	MaxQueryBytes = 200
	// MaxQueryWords is how many content words of a query are searched for.
	MaxQueryWords = 8
)

// query is a search string taken apart.
type query struct {
	// text is the lower-case tokens joined by spaces: what the trigram
	// ranker compares with labels.
	text string
	// tokens are the runs of letters and digits, in order.
	tokens []string
	// words are the tokens split by Segment, without stop words, at most
	// MaxQueryWords: what the keyword and semantic rankers look for.
	words []string
	// concepts are what the semantic ranker looks for: the words, except
	// that adjacent words that spell a WordNet compound stand as the
	// compound ("musical instruments" is musical_instrument rather than
	// something musical and some instruments), their words as parts.
	concepts []concept
	// compact is the tokens run together, as a label would write them
	// ("cheap flights" -> "cheapflights").
	compact string
	// depth is how many entries each ranker returns.
	depth int
	// tldOnly marks tokens written as a TLD (".io"): they choose the TLD and
	// are not words.
	tldOnly map[string]bool
}

// parseQuery takes q apart; inNames reports whether a name of the
// inventory holds a token, which is then never read as a misspelling.
func parseQuery(lx *lexicon, q string, inNames func(string) bool) query {
	if len(q) > MaxQueryBytes {
		q = q[:MaxQueryBytes]
	}
	q = toLower(q)
	pq := query{depth: listDepth}
	for i := 0; i < len(q); {
		if !isAlnum(q[i]) {
			i++
			continue
		}
		j := i
		for j < len(q) && isAlnum(q[j]) {
			j++
		}
		tok := q[i:j]
		if i > 0 && q[i-1] == '.' {
			if pq.tldOnly == nil {
				pq.tldOnly = map[string]bool{}
			}
			pq.tldOnly[tok] = true
		} else {
			pq.tokens = append(pq.tokens, tok)
		}
		i = j
	}
	pq.text = strings.Join(pq.tokens, " ")
	pq.compact = strings.Join(pq.tokens, "")
	for _, tok := range pq.tokens {
		for _, w := range lx.segment(lx.correct(tok, inNames)) {
			if len(pq.words) < MaxQueryWords && !slices.ContainsFunc(lx.lemmas(w), isStopWord) && !slices.Contains(pq.words, w) {
				pq.words = append(pq.words, w)
			}
		}
	}
	pq.concepts = lx.concepts(pq.words)
	return pq
}

type concept struct {
	word string
	part bool // a word of a compound that is also a concept
}

// concepts groups words into compounds where they spell one, scanning
// from the end so that the longest compound ending at each word wins.
func (lx *lexicon) concepts(words []string) []concept {
	var out []concept
	for i := len(words) - 1; i >= 0; i-- {
		cs := lx.compoundsEndingAt(words, i)
		if len(cs) == 0 {
			out = append(out, concept{word: words[i]})
			continue
		}
		out = append(out, concept{word: cs[0].lemma})
		for j := i; j >= cs[0].start; j-- {
			out = append(out, concept{word: words[j], part: true})
		}
		i = cs[0].start
	}
	slices.Reverse(out)
	return out
}

func isAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// isStopWord reports whether w says nothing about what a name is for: a
// function word ("a place for cheap flights" searches for place, cheap and
// flights), a filler verb ("getting married" is about marrying), or a word
// about the marketplace itself, where every name is a domain for sale
// ("houses for sale").
func isStopWord(w string) bool { return stopWords[w] }

var stopWords = wordSet(`a about above after again against all am an and any are as at be because been
		before being below between both but by can could did do does doing down during each few for from further
		had has have having he her here hers herself him himself his how i if in into is it its itself just
		me more most my myself no nor not of off on once only or other our ours ourselves out over own same
		she should so some such than that the their theirs them themselves then there these they this those
		through to too under until up very was we were what when where which while who whom why will with would
		you your yours yourself yourselves want need look find something thing things get
		domain website site name sale buy purchase available listing`)

func wordSet(words string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(words) {
		set[w] = true
	}
	return set
}
