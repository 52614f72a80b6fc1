package period

import (
	"testing"
	"time"
)

func TestPeriods(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 25, 15, 4, 5, 0, time.UTC) // a Wednesday
	for _, tc := range []struct {
		length     string
		start, end time.Time
	}{
		{"week", time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)},
		{"day", time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)},
		{"15m", time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC), time.Date(2026, 11, 25, 15, 15, 0, 0, time.UTC)},
		{"7m", time.Unix(at.Unix()-at.Unix()%420, 0).UTC(), time.Unix(at.Unix()-at.Unix()%420+420, 0).UTC()},
	} {
		l, err := ParseLength(tc.length)
		if err != nil {
			t.Fatal(err)
		}
		if p := l.Of(at); !p.Start.Equal(tc.start) || !p.End.Equal(tc.end) {
			t.Errorf("%s period of %s = %s–%s, want %s–%s", tc.length, at, p.Start, p.End, tc.start, tc.end)
		}
		if closed := l.Closed(at); !closed.End.Equal(tc.start) {
			t.Errorf("%s: the last closed period ends %s, want %s", tc.length, closed.End, tc.start)
		}
	}
	sunday := time.Date(2026, 11, 29, 23, 59, 0, 0, time.UTC)
	if p := Week.Of(sunday); !p.Start.Equal(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Sunday's week starts %s", p.Start)
	}
	for _, bad := range []string{"fortnight", "30s", "-1h"} {
		if _, err := ParseLength(bad); err == nil {
			t.Errorf("ParseLength(%q) accepted", bad)
		}
	}
}
