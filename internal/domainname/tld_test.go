package domainname

import (
	"strings"
	"testing"
)

func TestParseTLD(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{"com", "com", false},
		{" .COM ", "com", false},
		{"рф", "xn--p1ai", false},
		{"co.uk", "co.uk", false},
		{"", "", true},
		{".", "", true},
		{"c_m", "", true},
		{"123", "", true},
		{"..com", "", true},
		{"https://com", "", true},
	}
	for _, tc := range tests {
		got, err := ParseTLD(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseTLD(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Input != tc.in || e.Reason == "" {
				t.Errorf("ParseTLD(%q) error = %#v, want an *Error with the input and a reason", tc.in, err)
			}
		}
	}
}

// Lower-case letters skip normalising; the answer must be the one
// normalising would give, at the label length limit and past it.
func TestParseTLDShortcutAgreesWithNormalize(t *testing.T) {
	for _, in := range []string{"a", "com", "museum", "xn", strings.Repeat("q", 63), strings.Repeat("q", 64)} {
		got, err := ParseTLD(in)
		want, _, reason := normalize(in)
		if got != want || (err != nil) != (reason != "") {
			t.Errorf("ParseTLD(%q) = %q, %v; normalize gives %q, %q", in, got, err, want, reason)
		}
	}
}
