package domainname

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.input)
	}
	for _, tt := range parseErrorTests {
		f.Add(tt.input)
	}
	f.Fuzz(func(t *testing.T, input string) {
		host, hostErr := ParseHost(input)
		if hostErr == nil {
			if again, err := ParseHost(host); err != nil || again != host {
				t.Errorf("ParseHost(%q) = %q, but ParseHost of that = %q, %v", input, host, again, err)
			}
		}

		n, err := Parse(input)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Reason == "" || e.Input != input {
				t.Fatalf("Parse(%q) error %#v is not an *Error with a reason and the input", input, err)
			}
			return
		}

		if n.ASCII != strings.ToLower(n.ASCII) {
			t.Errorf("Parse(%q).ASCII = %q, not lower case", input, n.ASCII)
		}
		if len(n.ASCII) > 253 {
			t.Errorf("Parse(%q).ASCII is %d octets long", input, len(n.ASCII))
		}
		for _, label := range strings.Split(n.ASCII, ".") {
			if len(label) < 1 || len(label) > 63 {
				t.Errorf("Parse(%q).ASCII has a label of %d octets", input, len(label))
			}
			if strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" ||
				strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
				t.Errorf("Parse(%q).ASCII has the label %q, which is not LDH", input, label)
			}
		}
		if n.TLD == "" || !strings.HasSuffix(n.Registrable, "."+n.TLD) || !strings.HasSuffix(n.ASCII, n.Registrable) ||
			n.Registrable != n.Label+"."+n.TLD {
			t.Errorf("Parse(%q) = %+v, whose parts do not fit together", input, n)
		}

		again, err := Parse(n.ASCII)
		if err != nil {
			t.Fatalf("Parse(%q) = %+v, but Parse of its ASCII form: %v", input, n, err)
		}
		if d := cmp.Diff(n, again); d != "" {
			t.Errorf("Parse(Parse(%q).ASCII) mismatch (-want +got):\n%s", input, d)
		}
		fromUnicode, err := Parse(n.Unicode)
		if err != nil {
			t.Fatalf("Parse(%q) = %+v, but Parse of its Unicode form: %v", input, n, err)
		}
		if fromUnicode.ASCII != n.ASCII {
			t.Errorf("Parse(Parse(%q).Unicode).ASCII mismatch (-want +got):\n-%s\n+%s", input, n.ASCII, fromUnicode.ASCII)
		}

		if hostErr != nil || host != n.ASCII {
			t.Errorf("ParseHost(%q) = %q, %v; want %q, the ASCII form Parse gives", input, host, hostErr, n.ASCII)
		}
	})
}
