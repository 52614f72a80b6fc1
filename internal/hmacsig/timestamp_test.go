package hmacsig

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseTimestamp(t *testing.T) {
	now := time.Unix(1767225600, 900_000_000) // sub-second part ignored
	tests := []struct {
		name, s string
		want    string // in the error; empty when accepted
	}{
		{"now", "1767225600", ""},
		{"300 s behind", "1767225300", ""},
		{"300 s ahead", "1767225900", ""},
		{"leading zero", "01767225600", ""},
		{"301 s behind", "1767225299", "301 seconds behind"},
		{"301 s ahead", "1767225901", "301 seconds ahead"},
		{"zero", "0", "seconds behind"},
		{"milliseconds", "1767225600000", "looks like milliseconds"},
		{"empty", "", "empty"},
		{"plus sign", "+1767225600", "digits only"},
		{"minus sign", "-1767225600", "digits only"},
		{"fraction", "1767225600.5", "digits only"},
		{"exponent", "1.7672256e9", "digits only"},
		{"space", " 1767225600", "digits only"},
		{"RFC 3339", "2026-01-01T00:00:00Z", "digits only"},
		{"microseconds", "1767225600000000", "seconds ahead"},
		{"overflow", "99999999999999999999", "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTimestamp(tt.s, now, MaxSkew)
			if tt.want == "" {
				if want, _ := strconv.ParseInt(tt.s, 10, 64); err != nil || got.Unix() != want {
					t.Errorf("ParseTimestamp(%q) = %v, %v; want %s", tt.s, got, err, tt.s)
				}
				return
			}
			if !errors.Is(err, ErrBadTimestamp) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseTimestamp(%q) = %v, %v; want ErrBadTimestamp saying %q", tt.s, got, err, tt.want)
			}
		})
	}
}
