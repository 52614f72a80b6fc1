package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalizeLemma(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain", "plane", "plane"},
		{"case folded", "Paris", "paris"},
		{"adjective marker dropped", "galore(ip)", "galore"},
		{"hyphen is a compound", "cut-rate", "cut_rate"},
		{"compound", "coffee_shop", "coffee_shop"},
		{"too long a compound", "a_b_c_d", ""},
		{"not spellable", "o'clock", ""},
		{"digits", "4-H_club", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := normalizeLemma(tt.in); got != tt.want {
				t.Errorf("normalizeLemma(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseDataLine(t *testing.T) {
	line := "02691156 06 n 03 airplane 0 aeroplane 0 plane 1 003 @ 03510583 n 0000 ~ 02690373 n 0000 + 01940403 v 0301 | an aircraft that has a fixed wing; \"the flight was delayed\"  "
	got, err := parseDataLine("n", line)
	if err != nil {
		t.Fatal(err)
	}
	want := &synset{
		key:     synsetKey{"n", 2691156},
		members: []string{"airplane", "aeroplane", "plane"},
		pointers: []pointer{
			{"@", synsetKey{"n", 3510583}, 0, 0},
			{"+", synsetKey{"v", 1940403}, 3, 1},
		},
		gloss: `an aircraft that has a fixed wing; "the flight was delayed"`,
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(synset{}, synsetKey{}, pointer{})); diff != "" {
		t.Errorf("parseDataLine (-want +got):\n%s", diff)
	}
	def, examples := splitGloss(got.gloss)
	if diff := cmp.Diff([]string{"an", "aircraft", "that", "has", "a", "fixed", "wing", "the", "flight", "was", "delayed"},
		append(glossWords(def, func(string) bool { return true }), glossWords(examples, func(string) bool { return true })...)); diff != "" {
		t.Errorf("gloss words (-want +got):\n%s", diff)
	}
	if _, err := parseDataLine("n", "02691156 06 n"); err == nil {
		t.Error("a short line parsed")
	}
}
