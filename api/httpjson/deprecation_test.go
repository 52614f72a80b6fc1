package httpjson

import (
	"testing"
	"time"
)

// SPEC §8: what is deprecated is announced at least 90 days before it goes.
func TestDeprecationsGiveNinetyDaysNotice(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		d  Deprecation
		ok bool
	}{
		"90 days":        {Deprecation{Since: since, Sunset: since.Add(MinSunsetNotice), Link: "x"}, true},
		"no sunset yet":  {Deprecation{Since: since, Link: "x"}, true},
		"89 days":        {Deprecation{Since: since, Sunset: since.Add(MinSunsetNotice - 24*time.Hour), Link: "x"}, false},
		"sunset before":  {Deprecation{Since: since, Sunset: since.AddDate(0, 0, -1), Link: "x"}, false},
		"no date":        {Deprecation{Link: "x"}, false},
		"no replacement": {Deprecation{Since: since}, false},
	} {
		if err := tc.d.Check(); (err == nil) != tc.ok {
			t.Errorf("%s: Check = %v, want ok %v", name, err, tc.ok)
		}
	}
}
