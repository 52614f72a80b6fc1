package namesearch

import "slices"

// trigrams appends to dst the trigrams of text as Postgres's pg_trgm makes
// them, packed by trigramKey, sorted and each once: text is folded to lower
// case and split into words at anything but ASCII letters and digits, and
// each word is padded with two spaces in front and one behind ("cat" gives
// "  c", " ca", "cat", "at ").
func trigrams(text string, dst []uint32) []uint32 {
	start := len(dst)
	word := make([]byte, 0, 64)
	flush := func() {
		if len(word) > 0 {
			padded := append(append([]byte{' ', ' '}, word...), ' ')
			for i := 0; i+3 <= len(padded); i++ {
				dst = append(dst, trigramKey(padded[i], padded[i+1], padded[i+2]))
			}
			word = word[:0]
		}
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if isAlnum(c) {
			word = append(word, c)
		} else {
			flush()
		}
	}
	flush()
	slices.Sort(dst[start:])
	return append(dst[:start], slices.Compact(dst[start:])...)
}

func trigramKey(a, b, c byte) uint32 { return uint32(a)<<16 | uint32(b)<<8 | uint32(c) }

// minSimilarity is the least trigram similarity that ranks a label: 0.3,
// the default pg_trgm.similarity_threshold of Postgres's % operator. Below
// it a label shares a syllable or two with the query ("vino" and
// "vintage"), which says nothing about what the label means.
const minSimilarity = 0.3

// trigramRanking ranks labels by pg_trgm's similarity() to the query text:
// shared trigrams over all distinct trigrams of the two, from 0 to 1. The
// shared trigrams are counted through the postings, so labels that share
// none cost nothing.
func (ix *Index) trigramRanking(q query, sc *scratch) []scored {
	qg := trigrams(q.text, nil)
	counts, touched := sc.counts, sc.gramTouched[:0]
	for _, g := range qg {
		for _, n := range ix.grams[g] {
			if counts[n] == 0 {
				touched = append(touched, n)
			}
			counts[n]++
		}
	}
	out := sc.gramListed[:0]
	for _, n := range touched {
		c := int(counts[n])
		counts[n] = 0
		sim := float64(c) / float64(len(qg)+int(ix.sizes[n].grams)-c)
		if sim >= minSimilarity {
			out = append(out, scored{n, sim})
		}
	}
	sc.gramTouched, sc.gramListed = touched, out
	return ix.top(out, q.depth)
}
