// Package namesearch is a hybrid keyword and semantic search over domain
// names, for the partner API's inventory search: "inexpensive plane
// tickets" finds cheapflightsnow.com, "puppy grooming" petgroomingpro.com.
//
// An Index holds entries (ID and domain name) in memory. Each label is
// split into words (Segment: the most probable split under a word
// frequency list) and indexed under the words, their lemmas, the WordNet
// compounds they form ("coffee_shop") and its trigrams. A search runs three
// rankers and fuses their lists by reciprocal rank fusion:
//
//   - keyword: query words that are words or parts of the label, weighed by
//     how rare they are, and labels that spell the whole query;
//   - semantic: words related in meaning to the query's words through
//     WordNet (synonyms, broader and narrower words, derivations, similar
//     adjectives, words of definitions), each relation weighed and its
//     senses weighed by how common they are;
//   - trigram: pg_trgm's similarity() between query and label, which a
//     caller on Postgres may replace with its own ranking
//     (WithTrigramRanking) or add lists to (WithRanking).
//
// A query word that is no word, neither of the lexicon nor of the names,
// is read as the common word one letter from it ("resturant" as
// restaurant; spell.go).
//
// A TLD named in the query ("coffee shop io", "coffee shop .io") lifts the
// entries on it a little, and the first hits are kept from being variations
// of one word the query does not have.
//
// The language data (word frequencies from SUBTLEX-US, the WordNet 3.0
// subset) is embedded, about 3 MB compressed, and parsed once per process
// on first use. data/README.md says where it comes from and how ./gen
// rebuilds it. SampleInventory makes realistic names for tests and
// sandboxes.
package namesearch
