package namesearch

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkSearch100k builds an index of 100,000 sample names and runs the
// labelled queries against it, several rounds; it reports the latency of
// one search at the 50th and 99th percentile, the build time, the heap the
// index holds and the time of an update (Remove and Add). Run it with
// -benchtime 1x: the figures come from one run.
func BenchmarkSearch100k(b *testing.B) {
	loadLexicon() // once per process; not the index's cost
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	domains := SampleInventory(100_200, 42)
	ix := New(entriesOf(domains[:100_000]...))
	build := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if ix.Len() != 100_000 {
		b.Fatalf("Len() = %d, want 100000", ix.Len())
	}

	var queries []string
	for _, q := range append(readQueries(b, "testdata/queries-tune.tsv", false), readQueries(b, "testdata/queries-heldout.tsv", true)...) {
		queries = append(queries, q.query)
	}
	const rounds = 3
	var took []time.Duration
	b.ResetTimer()
	for b.Loop() {
		for range rounds {
			for _, q := range queries {
				t := time.Now()
				ix.Search(q, DefaultLimit)
				took = append(took, time.Since(t))
			}
		}
	}
	b.StopTimer()
	// An update is a Remove and an Add, what a changed listing costs.
	start = time.Now()
	for i, d := range domains[100_000:] {
		ix.Remove(fmt.Sprintf("id-%s", domains[i]))
		ix.Add(Entry{ID: fmt.Sprint("new-", i), Domain: d})
	}
	update := time.Since(start) / 200
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(build.Seconds(), "build-s")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "index-MB")
	b.ReportMetric(float64(len(took)), "searches")
	b.ReportMetric(float64(update.Microseconds()), "update-us")
	runtime.KeepAlive(ix)
}

// BenchmarkLoadLexicon measures what the first New or Segment in a process
// pays to parse the embedded data.
func BenchmarkLoadLexicon(b *testing.B) {
	var before, after runtime.MemStats
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		lx, err := parseLexicon(dataFS)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(lx)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MB")
}

// BenchmarkSegmentLong reports the time per byte of segmenting a long
// run of letters and one 16 times longer: equal figures mean linear time.
func BenchmarkSegmentLong(b *testing.B) {
	loadLexicon()
	for _, n := range []int{4 << 10, 64 << 10} {
		label := strings.Repeat("cheapflightsnowzqx", n/18+1)[:n]
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				Segment(label)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/byte")
		})
	}
}

func ExampleIndex_Search() {
	ix := New([]Entry{
		{ID: "1", Domain: "budgetairfare.com"},
		{ID: "2", Domain: "cheapflightsnow.com"},
		{ID: "3", Domain: "petgroomingpro.com"},
		{ID: "4", Domain: "sunsetyoga.io"},
	})
	for _, h := range ix.Search("puppy grooming", 1) {
		fmt.Println(h.Domain)
	}
	// Output: petgroomingpro.com
}
