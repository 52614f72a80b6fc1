package pagecursor

import (
	"errors"
	"strings"
	"testing"
)

var key = []byte("test-secret-key-0123456789abcdef")

func TestRoundTrip(t *testing.T) {
	c := Cursor{Query: "sort=newest&tld=com", Key: 1763900000000000000, ID: "4b0e7d1c"}
	s := Encode(key, c)
	if strings.Contains(s, "com") || strings.Contains(s, "=") {
		t.Errorf("cursor %q is not opaque URL-safe text", s)
	}
	got, err := Decode(key, s, c.Query)
	if err != nil || got != c {
		t.Errorf("Decode = %+v, %v; want %+v", got, err, c)
	}
}

func TestRefusals(t *testing.T) {
	c := Cursor{Query: "sort=newest", Key: 42, ID: "a"}
	s := Encode(key, c)
	p, sig, _ := strings.Cut(s, ".")
	forged := Encode([]byte("another key, another service...."), c)
	tests := map[string]struct{ cursor, query string }{
		"other query":   {s, "sort=price_asc"},
		"other key":     {forged, c.Query},
		"payload edit":  {Encode(key, Cursor{Query: c.Query, Key: 43, ID: "a"})[:len(p)] + "." + sig, c.Query},
		"no signature":  {p, c.Query},
		"empty":         {"", c.Query},
		"garbage":       {"!!!.???", c.Query},
		"huge":          {strings.Repeat("a", 5000), c.Query},
		"signed junk":   {b64.EncodeToString([]byte("[]")) + "." + b64.EncodeToString(sign(key, []byte("[]"))), c.Query},
		"signed no id":  {Encode(key, Cursor{Query: c.Query, Key: 1}), c.Query},
		"truncated sig": {s[:len(s)-2], c.Query},
	}
	for name, tc := range tests {
		if _, err := Decode(key, tc.cursor, tc.query); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Decode = %v, want ErrInvalid", name, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(key, Cursor{Query: "q", Key: 1, ID: "x"}), "q")
	f.Add("e30.AAAA", "q")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, s, query string) {
		c, err := Decode(key, s, query)
		if err == nil && (c.Query != query || c.ID == "") {
			t.Fatalf("Decode(%q, %q) accepted %+v", s, query, c)
		}
		if err == nil && Encode(key, c) != s {
			// A valid cursor is one this package made: it re-encodes identically.
			t.Fatalf("Decode accepted %q, which Encode would write as %q", s, Encode(key, c))
		}
	})
}
