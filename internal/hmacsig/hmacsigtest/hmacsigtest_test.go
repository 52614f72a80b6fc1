package hmacsigtest

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/domaind/domaind/internal/testtool"
)

// vectors.json is what vectors.mjs prints: nobody edited the expected values
// by hand (or by running the Go code they test).
func TestVectorsAreGenerated(t *testing.T) {
	node := testtool.Path(t, "vectors.mjs runs on node", "node")
	out, err := exec.Command(node, "vectors.mjs").Output()
	if err != nil {
		t.Fatalf("node vectors.mjs: %v", err)
	}
	if !bytes.Equal(out, vectorsJSON) {
		t.Error("vectors.json differs from the output of vectors.mjs; regenerate it (see the package doc)")
	}
}
