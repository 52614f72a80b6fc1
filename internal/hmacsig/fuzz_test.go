package hmacsig

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/hmacsig/hmacsigtest"
)

func FuzzCanonicalQuery(f *testing.F) {
	for _, v := range hmacsigtest.Load(f).Queries {
		f.Add(v.Raw)
	}
	f.Add("a=1;b=2&%%=&==&+=+")
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := CanonicalQuery(raw)
		if err != nil {
			if !errors.Is(err, ErrBadQuery) {
				t.Fatalf("CanonicalQuery(%q) error %v does not wrap ErrBadQuery", raw, err)
			}
			return
		}
		for i := 0; i < len(got); i++ {
			c := got[i]
			switch {
			case c == '%':
				if i+2 >= len(got) || !strings.ContainsRune("0123456789ABCDEF", rune(got[i+1])) || !strings.ContainsRune("0123456789ABCDEF", rune(got[i+2])) {
					t.Fatalf("CanonicalQuery(%q) = %q: escape at %d is not %%XX in upper case", raw, got, i)
				}
			case c == '&' || c == '=' || unreserved(c):
			default:
				t.Fatalf("CanonicalQuery(%q) = %q: %q left unencoded", raw, got, c)
			}
		}
		again, err := CanonicalQuery(got)
		if err != nil || again != got {
			t.Fatalf("CanonicalQuery(%q) = %q, but canonicalising that gives %q, %v", raw, got, again, err)
		}
		if want, have := pairs(t, raw), pairs(t, got); !slices.Equal(want, have) {
			t.Fatalf("CanonicalQuery(%q) = %q holds pairs %q; want %q", raw, got, have, want)
		}
	})
}

// pairs decodes a query into its sorted "key\x00value" pairs, the way
// net/url reads one but keeping pairs with ";".
func pairs(tb testing.TB, raw string) []string {
	tb.Helper()
	var ps []string
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		dk, err1 := url.QueryUnescape(k)
		dv, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			tb.Fatalf("pair %q of an accepted query does not decode", part)
		}
		ps = append(ps, dk+"\x00"+dv)
	}
	slices.Sort(ps)
	return ps
}

func FuzzParseTimestamp(f *testing.F) {
	now := time.Unix(1767225600, 0)
	for _, s := range []string{"1767225600", "1767225900", "1767225600000", "+1", "-0", "1e9", "", "00000001767225600", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTimestamp(s, now, MaxSkew)
		if err != nil {
			if !errors.Is(err, ErrBadTimestamp) {
				t.Fatalf("ParseTimestamp(%q) error %v does not wrap ErrBadTimestamp", s, err)
			}
			return
		}
		n, perr := strconv.ParseUint(s, 10, 63)
		if perr != nil || strings.ContainsAny(s, "+-") || len(s) == 13 {
			t.Fatalf("ParseTimestamp(%q) accepted a timestamp that is not seconds in digits", s)
		}
		if got.Unix() != int64(n) {
			t.Fatalf("ParseTimestamp(%q) = %d", s, got.Unix())
		}
		if d := got.Sub(now); d > MaxSkew || d < -MaxSkew {
			t.Fatalf("ParseTimestamp(%q) accepted a drift of %v", s, d)
		}
	})
}
