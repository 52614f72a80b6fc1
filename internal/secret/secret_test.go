package secret

import "testing"

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
