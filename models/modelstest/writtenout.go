package modelstest

import (
	"strings"
	"testing"
)

// WrittenOut fails tb unless in, a models function like OrdersIn, gives
// each of known its condition on column, the value written out, and
// refuses what is not one of them: the empty string, a value in another
// case, and a value with a quote (an injection).
func WrittenOut(tb testing.TB, in func(string) (string, bool), column string, known []string) {
	tb.Helper()
	for _, v := range known {
		if cond, ok := in(v); !ok || cond != column+" = '"+v+"'" {
			tb.Errorf("the condition of %q = %q, %v; want %s = '%s'", v, cond, ok, column, v)
		}
	}
	other := strings.ToLower(known[0])
	if other == known[0] {
		other = strings.ToUpper(other)
	}
	for _, bad := range []string{"", other, known[0] + "'", known[0] + "' OR '1'='1"} {
		if cond, ok := in(bad); ok {
			tb.Errorf("the condition of %q = %q; want none", bad, cond)
		}
	}
}
