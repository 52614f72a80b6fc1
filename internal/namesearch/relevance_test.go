package namesearch

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/inventory.txt from SampleInventory")

// The inventory the labelled queries are judged against is fixed in
// testdata, so that a change to SampleInventory cannot move the figures.
const (
	inventoryFile = "testdata/inventory.txt"
	inventorySize = 3000
	inventorySeed = 1
)

// Targets of the issue, on all queries of each kind.
const (
	paraphraseTarget = 0.8
	keywordTarget    = 0.95
)

type labelledQuery struct {
	kind     string // "para" or "kw"
	query    string
	relevant []*regexp.Regexp // all must match a relevant label
	heldOut  bool
}

// TestRelevance prints recall@5 (the share of queries with a relevant
// label among the first five hits) and MRR (the mean of 1/rank of the
// first relevant hit) for each kind of query, on the tuning and held-out
// files and on both, and fails if all queries of a kind fall below the
// issue's target. -update rewrites the inventory first.
func TestRelevance(t *testing.T) {
	if *update {
		writeLines(t, inventoryFile, SampleInventory(inventorySize, inventorySeed))
	}
	ix, cases := relevanceSetup(t)
	ms, misses := evaluate(ix, cases)
	for _, m := range misses {
		t.Log(m)
	}
	for _, kind := range []string{"para", "kw"} {
		for _, half := range []string{"tune", "held-out", "all"} {
			m := ms[kind+" "+half]
			t.Logf("%-4s %-8s n=%2d  recall@5=%.3f  MRR=%.3f", kind, half, m.n, m.recall(), m.mrr())
		}
	}
	if r := ms["para all"].recall(); r < paraphraseTarget {
		t.Errorf("paraphrase recall@5 = %.3f, want >= %.2f", r, paraphraseTarget)
	}
	if r := ms["kw all"].recall(); r < keywordTarget {
		t.Errorf("keyword recall@5 = %.3f, want >= %.2f", r, keywordTarget)
	}
}

// relevanceCase is a labelled query with its judgement over the inventory.
type relevanceCase struct {
	labelledQuery
	relevant, ignored map[string]bool
}

func relevanceSetup(tb testing.TB) (*Index, []relevanceCase) {
	tb.Helper()
	domains := readLines(tb, inventoryFile)
	entries := make([]Entry, len(domains))
	for i, d := range domains {
		entries[i] = Entry{ID: fmt.Sprint(i), Domain: d}
	}
	var cases []relevanceCase
	queries := append(readQueries(tb, "testdata/queries-tune.tsv", false), readQueries(tb, "testdata/queries-heldout.tsv", true)...)
	for _, q := range queries {
		relevant, ignored := judge(q, domains)
		if len(relevant) == 0 {
			tb.Errorf("%s %q: no relevant label in the inventory", q.kind, q.query)
			continue
		}
		cases = append(cases, relevanceCase{q, relevant, ignored})
	}
	return New(entries), cases
}

type metric struct {
	n         int
	found, rr float64
}

func (m metric) recall() float64 { return m.found / float64(m.n) }
func (m metric) mrr() float64    { return m.rr / float64(m.n) }

// scores are metrics by "kind half": "para tune", "para held-out", and
// "para all" for both halves.
type scores map[string]*metric

// add counts a query of kind whose relevant name came at rank (0: not in
// the first five), and returns the query's half.
func (s scores) add(kind string, heldOut bool, rank int) (half string) {
	half = "tune"
	if heldOut {
		half = "held-out"
	}
	for _, key := range []string{kind + " " + half, kind + " all"} {
		if s[key] == nil {
			s[key] = &metric{}
		}
		s[key].n++
		if rank > 0 {
			s[key].found++
			s[key].rr += 1 / float64(rank)
		}
	}
	return half
}

// evaluate returns recall@5 and MRR by "kind half" ("para tune", "kw all")
// and a line for each query with no relevant label in its first five.
func evaluate(ix *Index, cases []relevanceCase) (scores, []string) {
	ms := scores{}
	var misses []string
	for _, c := range cases {
		rank, shown := 0, 0
		var got []string
		for _, h := range ix.Search(c.query, 5+len(c.ignored)) {
			if c.ignored[h.Domain] || shown == 5 {
				continue
			}
			shown++
			got = append(got, h.Domain)
			if rank == 0 && c.relevant[h.Domain] {
				rank = shown
			}
		}
		half := ms.add(c.kind, c.heldOut, rank)
		if rank == 0 {
			misses = append(misses, fmt.Sprintf("miss %-4s %-8s %-28q (%d relevant) got %v", c.kind, half, c.query, len(c.relevant), got))
		}
	}
	return ms, misses
}

// judge returns the relevant domains of q and, for a paraphrase, the
// domains left out of the judgement because their label contains the first
// four letters of a query word (a shared stem).
func judge(q labelledQuery, domains []string) (relevant, ignored map[string]bool) {
	relevant, ignored = map[string]bool{}, map[string]bool{}
	var stems []string
	if q.kind == "para" {
		for _, w := range strings.Fields(q.query) {
			if len(w) >= 3 && !isStopWord(w) {
				stems = append(stems, w[:min(4, len(w))])
			}
		}
	}
	for _, d := range domains {
		label, _, _ := strings.Cut(d, ".")
		if containsAny(label, stems) {
			ignored[d] = true
			continue
		}
		match := true
		for _, re := range q.relevant {
			match = match && re.MatchString(label)
		}
		if match {
			relevant[d] = true
		}
	}
	return relevant, ignored
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func readQueries(tb testing.TB, path string, heldOut bool) []labelledQuery {
	tb.Helper()
	var out []labelledQuery
	for _, f := range readTSV(tb, path, 3) {
		if f[0] != "para" && f[0] != "kw" {
			tb.Fatalf("%s: kind %q, want para or kw", path, f[0])
		}
		q := labelledQuery{kind: f[0], query: f[1], heldOut: heldOut}
		for _, expr := range strings.Split(f[2], " & ") {
			q.relevant = append(q.relevant, regexp.MustCompile(expr))
		}
		out = append(out, q)
	}
	return out
}

func readLines(tb testing.TB, path string) []string {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return lines
}

// readTSV returns the tab-separated fields of path's lines, blank lines
// and # comments left out, and fails tb on a line without n fields.
func readTSV(tb testing.TB, path string, n int) [][]string {
	tb.Helper()
	var out [][]string
	for _, line := range readLines(tb, path) {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != n {
			tb.Fatalf("%s: %d fields in %q, want %d", path, len(f), line, n)
		}
		out = append(out, f)
	}
	return out
}

func writeLines(tb testing.TB, path string, lines []string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
}
