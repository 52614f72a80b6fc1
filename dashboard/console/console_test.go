package console

import (
	"testing"

	"github.com/domaind/domaind/internal/fault"
)

// Amounts typed in dollars on the ops page: digits, thousands groups of
// three, at most two decimals; anything else names the field.
func TestFormCents(t *testing.T) {
	for in, want := range map[string]int64{"1250": 125_000, "1,250.5": 125_050, "12,500,000": 1_250_000_000, "0.07": 7, " 3 ": 300} {
		if got, err := formCents("price", in); err != nil || got != want {
			t.Errorf("formCents(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-0.50", "1.+5", "+3", "1,2,3", "1.234", "12,50", "abc", ".5", "1e3"} {
		if got, err := formCents("price", in); err == nil {
			t.Errorf("formCents(%q) = %d, want an error", in, got)
		} else if e, ok := fault.As(err); !ok || e.Field != "price" {
			t.Errorf("formCents(%q) = %v, want a validation error naming price", in, err)
		}
	}
}

// Commissions typed as percentages on the partners page: at most two
// decimals, 0 to 100; anything else names the field.
func TestFormPercent(t *testing.T) {
	for in, want := range map[string]int{"15": 1500, "12.5": 1250, "0": 0, "100": 10_000, " 7.25 ": 725, "3.": 300} {
		if got, err := formPercent("commission", in); err != nil || *got != want {
			t.Errorf("formPercent(%q) = %v, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "100.01", "150", "-1", "1.234", "abc", ".5", "1e2", "12,5",
		"184467440737095516.16", "184467440737095517"} { // w*100 wraps to 0 and to 84
		if got, err := formPercent("commission", in); err == nil {
			t.Errorf("formPercent(%q) = %d, want an error", in, *got)
		} else if e, ok := fault.As(err); !ok || e.Field != "commission" {
			t.Errorf("formPercent(%q) = %v, want a validation error naming commission", in, err)
		}
	}
}
