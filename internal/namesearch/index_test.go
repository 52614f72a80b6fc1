package namesearch

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// smallIndex is a hand-made inventory where each test query has one right
// answer.
func smallIndex(tb testing.TB) *Index {
	tb.Helper()
	return New(entriesOf(
		"budgetairfare.com", "cheapflightsnow.com", "petgroomingpro.com", "sunsetyoga.io",
		"bestcoffeeshop.com", "bestcoffeeshop.io", "lawyerdirect.net", "dentalcare.org",
		"pizzanow.com", "solarpanels.shop", "vintagewear.store", "cryptowallet.app",
	))
}

func entriesOf(domains ...string) []Entry {
	out := make([]Entry, len(domains))
	for i, d := range domains {
		out[i] = Entry{ID: fmt.Sprintf("id-%s", d), Domain: d}
	}
	return out
}

func domainsOf(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Domain
	}
	return out
}

func TestSearchFirstHit(t *testing.T) {
	ix := smallIndex(t)
	tests := []struct {
		name  string
		query string
		want  string
	}{
		{"hypernym and keyword", "puppy grooming", "petgroomingpro.com"},
		{"exact label", "cheapflightsnow", "cheapflightsnow.com"},
		{"exact domain", "sunsetyoga.io", "sunsetyoga.io"},
		{"synonym", "attorney", "lawyerdirect.net"},
		{"pertainym", "teeth", "dentalcare.org"},
		{"TLD named as a word", "coffee shop io", "bestcoffeeshop.io"},
		{"TLD named with a dot", "coffee shop .io", "bestcoffeeshop.io"},
		{"no TLD: ties by domain", "coffee shop", "bestcoffeeshop.com"},
		{"partial keyword", "groom", "petgroomingpro.com"},
		{"typo through trigrams", "pizzanw", "pizzanow.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := ix.Search(tt.query, 5)
			if len(hits) == 0 || hits[0].Domain != tt.want {
				t.Errorf("Search(%q) = %v, want %s first", tt.query, domainsOf(hits), tt.want)
			}
		})
	}
}

// TestIssueExamples checks the examples of issue 14, in the small index
// and in the sample inventory the relevance test uses (where other cheap
// travel names compete: budgetairfare.com comes 10th there).
func TestIssueExamples(t *testing.T) {
	sample := New(entriesOf(readLines(t, inventoryFile)...))
	tests := []struct {
		name  string
		ix    *Index
		query string
		want  []string // all among the first len(want), or five if more
		top   int
	}{
		{"small", smallIndex(t), "inexpensive plane tickets", []string{"budgetairfare.com", "cheapflightsnow.com"}, 2},
		{"sample", sample, "inexpensive plane tickets", []string{"cheapflightsnow.com"}, 5},
		{"small", smallIndex(t), "puppy grooming", []string{"petgroomingpro.com"}, 1},
		{"sample", sample, "puppy grooming", []string{"petgroomingpro.com"}, 5},
	}
	for _, tt := range tests {
		got := domainsOf(tt.ix.Search(tt.query, tt.top))
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: Search(%q, %d) = %v, want %s among them", tt.name, tt.query, tt.top, got, w)
			}
		}
	}
}

func TestSearchLimits(t *testing.T) {
	entries := entriesOf(SampleInventory(500, 3)...)
	var all []string
	for _, e := range entries {
		all = append(all, e.ID)
	}
	ix := New(entries)
	tests := []struct {
		name  string
		query string
		k     int
		opts  []SearchOption
		want  int
	}{
		{"default", "coffee", 0, nil, DefaultLimit},
		{"asked", "coffee", 3, nil, 3},
		{"capped", "coffee", 1000, []SearchOption{WithRanking(all, 0.1)}, MaxLimit},
		{"nothing to search", "  -- ", 5, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := len(ix.Search(tt.query, tt.k, tt.opts...)); got != tt.want {
				t.Errorf("len(Search(%q, %d)) = %d, want %d", tt.query, tt.k, got, tt.want)
			}
		})
	}
}

func TestSearchDeterministic(t *testing.T) {
	domains := SampleInventory(2000, 7)
	a := New(entriesOf(domains...))
	reversed := make([]string, len(domains))
	for i, d := range domains {
		reversed[len(domains)-1-i] = d
	}
	b := New(entriesOf(reversed...))
	for _, q := range []string{"coffee", "cheap flights", "happy", "yoga studio", "wine"} {
		ha, hb := a.Search(q, 20), b.Search(q, 20)
		if diff := cmp.Diff(ha, hb); diff != "" {
			t.Errorf("Search(%q) depends on insertion order (-first +second):\n%s", q, diff)
		}
		for i := 1; i < len(ha); i++ {
			if ha[i-1].Score == ha[i].Score && ha[i-1].Domain > ha[i].Domain {
				t.Errorf("Search(%q): tie %v before %v", q, ha[i-1], ha[i])
			}
		}
	}
}

// An index whose entries were removed and others added in their slots
// searches as one built from what it holds: nothing of a removed label
// (its words, trigrams, sizes) stays with its slot.
func TestUpdatedIndexSearchesAsANewOne(t *testing.T) {
	domains := SampleInventory(3000, 11)
	updated := New(entriesOf(domains[:2000]...))
	for i, d := range domains[2000:] {
		updated.Remove(fmt.Sprintf("id-%s", domains[2*i]))
		updated.Add(Entry{ID: fmt.Sprintf("id-%s", d), Domain: d})
	}
	var kept []string
	for i, d := range domains[:2000] {
		if i%2 == 1 {
			kept = append(kept, d)
		}
	}
	fresh := New(entriesOf(append(kept, domains[2000:]...)...))
	if updated.Len() != fresh.Len() {
		t.Fatalf("Len() = %d, want %d", updated.Len(), fresh.Len())
	}
	for _, q := range []string{"coffee", "cheap flights", "happy", "yoga studio", "wine", "bestpetshop", "trvel"} {
		if diff := cmp.Diff(fresh.Search(q, 20), updated.Search(q, 20)); diff != "" {
			t.Errorf("Search(%q) after updates differs from a fresh index (-fresh +updated):\n%s", q, diff)
		}
	}
}

func TestAddRemove(t *testing.T) {
	ix := smallIndex(t)
	ix.Remove("id-petgroomingpro.com")
	ix.Remove("no-such-id")
	if got := domainsOf(ix.Search("petgroomingpro", 5)); len(got) > 0 && got[0] == "petgroomingpro.com" {
		t.Errorf("removed entry still found: %v", got)
	}
	ix.Add(Entry{ID: "id-new", Domain: "PuppyGroomers.net"})
	if got := domainsOf(ix.Search("puppy groomers", 1)); !cmp.Equal(got, []string{"puppygroomers.net"}) {
		t.Errorf("added entry: got %v, want [puppygroomers.net]", got)
	}
	ix.Add(Entry{ID: "id-new", Domain: "kittengroomers.net"})
	if got := domainsOf(ix.Search("puppygroomers", 5)); len(got) > 0 && got[0] == "puppygroomers.net" {
		t.Errorf("replaced entry still found under its old name: %v", got)
	}
	if got, want := ix.Len(), 12; got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
}

func TestWithRankings(t *testing.T) {
	ix := smallIndex(t)
	tests := []struct {
		name  string
		opts  []SearchOption
		first string // the first hit
		among string // a hit among the first five
	}{
		// "pizza now" matches pizzanow.com by keyword, meaning and trigrams.
		{"in-memory trigrams", nil, "pizzanow.com", "cheapflightsnow.com"},
		{"external trigram list, unknown IDs skipped", []SearchOption{WithTrigramRanking([]string{"id-solarpanels.shop", "unknown"})},
			"pizzanow.com", "solarpanels.shop"},
		{"heavy extra list, repeats skipped", []SearchOption{WithRanking([]string{"id-dentalcare.org", "id-dentalcare.org"}, 5)},
			"dentalcare.org", "pizzanow.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := domainsOf(ix.Search("pizza now", 5, tt.opts...))
			if len(got) == 0 || got[0] != tt.first || !slices.Contains(got, tt.among) {
				t.Errorf("Search = %v, want %s first and %s among them", got, tt.first, tt.among)
			}
		})
	}
	without := domainsOf(ix.Search("pizza now", 5))
	if slices.Contains(without, "solarpanels.shop") {
		t.Errorf("solarpanels.shop found without the external list: %v", without)
	}
}

// TestConcurrentUse runs searches while entries come and go; run with -race.
func TestConcurrentUse(t *testing.T) {
	domains := SampleInventory(3000, 11)
	ix := New(entriesOf(domains[:2000]...))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if hits := ix.Search([]string{"coffee", "cheap flights", "yoga", "lawyer"}[(i+w)%4], 5); len(hits) > 5 {
					t.Errorf("%d hits", len(hits))
				}
			}
		}()
	}
	for i, d := range domains[2000:] {
		ix.Add(Entry{ID: fmt.Sprint("new", i), Domain: d})
		ix.Remove(fmt.Sprintf("id-%s", domains[i]))
	}
	wg.Wait()
	if got, want := ix.Len(), 2000; got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
}
