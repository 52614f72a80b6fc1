package pagecursor

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

var key = []byte("test-secret-key-0123456789abcdef")

func TestRoundTrip(t *testing.T) {
	c := Cursor{Query: "sort=price_asc&tld=com", Key: 1234567, ID: "4b0e7d1c"}
	s := Encode(key, c)
	got, err := Decode(key, s, c.Query)
	if err != nil || got != c {
		t.Errorf("Decode = %+v, %v; want %+v", got, err, c)
	}
	if Encode(key, c) == s {
		t.Error("two encodings of one cursor are equal: the nonce is not random")
	}
}

// A cursor must not tell what it holds: a price sort's key is a price an
// anonymous caller may not see.
func TestCursorIsOpaque(t *testing.T) {
	c := Cursor{Query: "sort=price_asc", Key: 1234567, ID: "listing-42"}
	s := Encode(key, c)
	raw, err := b64.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{strconv.FormatInt(c.Key, 10), c.ID, c.Query, `"k"`} {
		if strings.Contains(s, leak) || strings.Contains(string(raw), leak) {
			t.Errorf("cursor %q shows %q", s, leak)
		}
	}
}

func TestRefusals(t *testing.T) {
	c := Cursor{Query: "sort=newest", Key: 42, ID: "a"}
	s := Encode(key, c)
	raw, _ := b64.DecodeString(s)
	flipped := append([]byte{}, raw...)
	flipped[len(flipped)/2] ^= 1
	tests := map[string]struct{ cursor, query string }{
		"other query":  {s, "sort=price_asc"},
		"other key":    {Encode([]byte("another key, another service...."), c), c.Query},
		"flipped bit":  {b64.EncodeToString(flipped), c.Query},
		"truncated":    {s[:len(s)-3], c.Query},
		"empty":        {"", c.Query},
		"garbage":      {"!!!.???", c.Query},
		"too short":    {"AAAA", c.Query},
		"huge":         {strings.Repeat("a", 5000), c.Query},
		"sealed no id": {Encode(key, Cursor{Query: c.Query, Key: 1}), c.Query},
	}
	for name, tc := range tests {
		if _, err := Decode(key, tc.cursor, tc.query); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Decode = %v, want ErrInvalid", name, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(key, Cursor{Query: "q", Key: 1, ID: "x"}), "q")
	f.Add("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "q")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, s, query string) {
		c, err := Decode(key, s, query)
		if err == nil && (c.Query != query || c.ID == "") {
			t.Fatalf("Decode(%q, %q) accepted %+v", s, query, c)
		}
	})
}

func TestLimit(t *testing.T) {
	for _, tc := range []struct{ in, want int }{{0, 50}, {1, 1}, {100, 100}} {
		if got, err := Limit(tc.in, 50, 100); err != nil || got != tc.want {
			t.Errorf("Limit(%d) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []int{-1, 101} {
		if _, err := Limit(bad, 50, 100); err == nil || !strings.Contains(err.Error(), "limit must be from 1 to 100") {
			t.Errorf("Limit(%d) = %v, want a validation error", bad, err)
		}
	}
}

// Trim keeps a page and gives the cursor of its last item, or none when
// nothing follows.
func TestTrim(t *testing.T) {
	keyOf := func(n int) (int64, string) { return int64(n * 10), strconv.Itoa(n) }
	page, next := Trim(key, "q", []int{1, 2, 3}, 2, keyOf)
	if len(page) != 2 || page[1] != 2 || next == "" {
		t.Fatalf("Trim of 3 to 2 = %v, %q", page, next)
	}
	c, err := Decode(key, next, "q")
	if err != nil || c.Key != 20 || c.ID != "2" || !c.At().Equal(time.Unix(0, 20).UTC()) {
		t.Errorf("its cursor = %+v, %v; want the second item's", c, err)
	}
	if page, next := Trim(key, "q", []int{1, 2}, 2, keyOf); len(page) != 2 || next != "" {
		t.Errorf("Trim of a last page = %v, %q; want no cursor", page, next)
	}
}
