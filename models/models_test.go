package models

import (
	"errors"
	"testing"
	"unicode/utf8"
)

func TestErrorTextKeepsCharactersWhole(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		max       int
		want      string
	}{
		{"fits", "lookup failed", 20, "lookup failed"},
		{"ascii cut", "lookup failed", 6, "lookup"},
		{"cut inside a 2-byte character", "café au lait", 4, "caf"},
		{"cut after a 2-byte character", "café au lait", 5, "café"},
		{"cut inside a 4-byte character", "ok 🦊 done", 5, "ok "},
	} {
		got := ErrorText(errors.New(tc.msg), tc.max)
		if got != tc.want || !utf8.ValidString(got) || len(got) > tc.max {
			t.Errorf("%s: ErrorText(%q, %d) = %q, want %q", tc.name, tc.msg, tc.max, got, tc.want)
		}
	}
}
