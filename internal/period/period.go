// Package period cuts time into settlement periods
// (DOMAIND_SETTLEMENT_PERIOD): calendar weeks from Monday 00:00 UTC, days
// from 00:00 UTC, or a fixed duration of at least a minute aligned to the
// Unix epoch.
package period

import (
	"fmt"
	"time"
)

// Length is how long a period is: a week, a day or a duration.
type Length struct {
	name string
	d    time.Duration // for durations; 0 for week and day
}

// Week is the default length.
var Week = Length{name: "week"}

// ParseLength reads "week", "day" or a duration of at least 1m ("15m").
func ParseLength(s string) (Length, error) {
	switch s {
	case "week", "":
		return Week, nil
	case "day":
		return Length{name: "day"}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Minute {
		return Length{}, fmt.Errorf("want week, day or a duration of at least 1m such as 15m, got %q", s)
	}
	return Length{name: d.String(), d: d}, nil
}

// String is the length as DOMAIND_SETTLEMENT_PERIOD writes it. The zero
// Length is a week.
func (l Length) String() string {
	if l.name == "" {
		return Week.name
	}
	return l.name
}

// Period is one settlement period: from Start (included) to End.
type Period struct{ Start, End time.Time }

// Of returns the period t falls in.
func (l Length) Of(t time.Time) Period {
	t = t.UTC()
	switch {
	case l.d > 0:
		n := t.UnixNano()
		start := n - n%int64(l.d)
		if n < 0 && n%int64(l.d) != 0 {
			start -= int64(l.d)
		}
		s := time.Unix(0, start).UTC()
		return Period{s, s.Add(l.d)}
	case l.name == "day":
		s := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return Period{s, s.AddDate(0, 0, 1)}
	default:
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		s := day.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7)) // back to Monday
		return Period{s, s.AddDate(0, 0, 7)}
	}
}

// Starting returns the period that starts at start, or false when no
// period starts there.
func (l Length) Starting(start time.Time) (Period, bool) {
	p := l.Of(start)
	return p, p.Start.Equal(start.UTC())
}

// Closed returns the latest period that ended at or before now.
func (l Length) Closed(now time.Time) Period {
	return l.Of(l.Of(now).Start.Add(-time.Nanosecond))
}

// Schedule is when the scheduler asks for the run of a period just closed:
// every Every, Offset after each multiple of it since the Unix epoch. A
// week's run is asked for on Mondays at 03:00 UTC (the epoch was a
// Thursday), a day's at 00:30, a shorter period's a tenth of it after its
// end.
func (l Length) Schedule() (every, offset time.Duration) {
	switch {
	case l.d > 0:
		return l.d, l.d / 10
	case l.name == "day":
		return 24 * time.Hour, 30 * time.Minute
	default:
		return 7 * 24 * time.Hour, 4*24*time.Hour + 3*time.Hour
	}
}
