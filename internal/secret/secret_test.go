package secret

import (
	"errors"
	"strings"
	"testing"
)

func TestNewIsRandomAndURLSafe(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		s := New()
		if len(s) != 43 {
			t.Fatalf("len(%q) = %d, want 43", s, len(s))
		}
		for _, c := range s {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				t.Fatalf("%q has %q, not URL-safe", s, c)
			}
		}
		if seen[s] {
			t.Fatal("New repeated itself")
		}
		seen[s] = true
	}
}

func TestHash(t *testing.T) {
	// SHA-256 of "abc" (FIPS 180-2 test vector).
	if got := Hash("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("Hash(abc) = %s", got)
	}
}

func TestSealer(t *testing.T) {
	key := []byte("test-secret-key-0123456789abcdef")
	s := NewSealer(key, "answers")
	sealed := s.Seal([]byte("dks_the-secret"))
	if strings.Contains(string(sealed), "dks_the-secret") {
		t.Fatal("sealed data holds the plain text")
	}
	if got, err := s.Open(sealed); err != nil || string(got) != "dks_the-secret" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if again := s.Seal([]byte("dks_the-secret")); string(again) == string(sealed) {
		t.Error("two seals of the same text are equal: the nonce must be fresh")
	}
	tampered := append([]byte{}, sealed...)
	tampered[len(tampered)-1] ^= 1
	for name, tc := range map[string]struct {
		s    *Sealer
		data []byte
	}{
		"other purpose": {NewSealer(key, "cursors"), sealed},
		"other key":     {NewSealer([]byte("another-secret-key-0123456789abc"), "answers"), sealed},
		"tampered":      {s, tampered},
		"short":         {s, sealed[:10]},
	} {
		if _, err := tc.s.Open(tc.data); !errors.Is(err, ErrUnsealable) {
			t.Errorf("%s: Open = %v, want ErrUnsealable", name, err)
		}
	}
}

func TestIsIDKnowsTheIDsNewIDMakes(t *testing.T) {
	id := NewID("bop_")
	for _, tc := range []struct {
		id, prefix string
		want       bool
	}{
		{id, "bop_", true},
		{id, "job_", false},
		{"bop_0123456789abcdef0123456", "bop_", false},   // 23 digits
		{"bop_0123456789ABCDEF01234567", "bop_", false},  // upper case
		{"bop_0123456789abcdef0123456g", "bop_", false},  // not hex
		{"bop_0123456789abcdef01234567x", "bop_", false}, // 25 characters
	} {
		if got := IsID(tc.id, tc.prefix); got != tc.want {
			t.Errorf("IsID(%q, %q) = %v", tc.id, tc.prefix, got)
		}
	}
}
