package domainname

import (
	"errors"
	"fmt"
	"sort"
	"testing"
)

func TestSweep(t *testing.T) {
	counts := map[string]int{}
	examples := map[string]string{}
	ok := 0
	for r := rune(0x80); r <= 0x10ffff; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		for _, f := range []string{"a%cb.com", "%c.com", "%cb.com", "ب%c.com", "a%c", "xn--%c.com"} {
			in := fmt.Sprintf(f, r)
			n, err := Parse(in)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatal(err)
				}
				reason := e.Reason
				if len(reason) > 0 {
					k := reason
					if i := indexOf(k); i >= 0 {
						k = k[i:]
					}
					counts[k]++
					examples[k] = in
				}
				continue
			}
			ok++
			again, err := Parse(n.Unicode)
			if err != nil || again.ASCII != n.ASCII {
				t.Errorf("%q: %+v -> %v %+v", in, n, err, again)
			}
			again, err = Parse(n.ASCII)
			if err != nil || again != n {
				t.Errorf("%q: %+v -> %v %+v", in, n, err, again)
			}
		}
	}
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%7d %s   e.g. %q", counts[k], k, examples[k])
	}
	t.Logf("ok %d", ok)
}

func indexOf(s string) int {
	for _, m := range []string{" contains the symbol", " contains \"", " starts with", " ends with", " is not", " has ", " decodes", " is empty", " is "} {
		for i := 0; i+len(m) <= len(s); i++ {
			if s[i:i+len(m)] == m {
				return i
			}
		}
	}
	return -1
}
