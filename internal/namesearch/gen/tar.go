package main

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

// readTarGz returns the named members of a gzipped tar file (an npm package
// as `npm pack` downloads it) and fails if one is missing.
func readTarGz(path string, names ...string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	files := make(map[string][]byte, len(names))
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if !want[h.Name] {
			continue
		}
		if files[h.Name], err = io.ReadAll(tr); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, h.Name, err)
		}
	}
	for _, n := range names {
		if _, ok := files[n]; !ok {
			return nil, fmt.Errorf("%s: no %s", path, n)
		}
	}
	return files, nil
}
