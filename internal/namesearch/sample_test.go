package namesearch

import (
	"slices"
	"strings"
	"testing"
)

func TestSampleInventory(t *testing.T) {
	a := SampleInventory(3000, 1)
	if len(a) != 3000 {
		t.Fatalf("%d names, want 3000", len(a))
	}
	if b := SampleInventory(3000, 1); !slices.Equal(a, b) {
		t.Error("same seed gave different names")
	}
	if b := SampleInventory(2000, 1); !slices.Equal(a[:2000], b) {
		t.Error("a shorter list is not a prefix of the longer one")
	}
	if b := SampleInventory(3000, 2); slices.Equal(a, b) {
		t.Error("another seed gave the same names")
	}
	if !slices.Equal(a[:len(sampleAnchors)], sampleAnchors) {
		t.Errorf("list starts %v, want the anchors %v", a[:len(sampleAnchors)], sampleAnchors)
	}
	lx := loadLexicon()
	seen := map[string]bool{}
	tlds := map[string]bool{}
	for _, d := range a {
		if seen[d] {
			t.Errorf("%s twice", d)
		}
		seen[d] = true
		label, tld, ok := strings.Cut(d, ".")
		if !ok || label == "" || len(label) > 63 || strings.Trim(label, "-") != label {
			t.Errorf("%s: bad label", d)
		}
		tlds[tld] = true
		// Labels are made of real words: each piece but digits is a word
		// of the frequency list.
		for _, w := range lx.segment(label) {
			if _, known := lx.logProb[w]; !known && strings.Trim(w, "0123456789") != "" && w != "u" {
				t.Errorf("%s: %q is no word", d, w)
			}
		}
	}
	if len(tlds) < 20 {
		t.Errorf("%d TLDs, want at least 20", len(tlds))
	}
}

// TestInventoryFile checks that testdata/inventory.txt is what
// SampleInventory makes; go test -run TestRelevance -update rewrites it.
func TestInventoryFile(t *testing.T) {
	if got := readLines(t, inventoryFile); !slices.Equal(got, SampleInventory(inventorySize, inventorySeed)) {
		t.Errorf("%s is not SampleInventory(%d, %d): run go test -run TestRelevance -update", inventoryFile, inventorySize, inventorySeed)
	}
}
