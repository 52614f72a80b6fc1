package namesearch

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// TestTop checks the heap selection against a full sort, ties included.
func TestTop(t *testing.T) {
	ix := New(entriesOf(SampleInventory(300, 5)...))
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 5, 50, 400} {
		list := make([]scored, 300)
		for i := range list {
			list[i] = scored{int32(i), float64(rng.IntN(20))} // many ties
		}
		want := slices.Clone(list)
		slices.SortFunc(want, func(a, b scored) int {
			if a.score != b.score {
				return cmp.Compare(b.score, a.score)
			}
			return cmp.Compare(ix.slots[a.slot].domain, ix.slots[b.slot].domain)
		})
		want = want[:min(n, len(want))]
		if diff := gocmp.Diff(want, ix.top(list, n), gocmp.AllowUnexported(scored{})); diff != "" {
			t.Errorf("top(%d) (-want +got):\n%s", n, diff)
		}
	}
}
