package hmacsig

import (
	"fmt"
	"strconv"
	"time"
)

// MaxSkew is how far a request's timestamp may be from the server's clock,
// either way.
const MaxSkew = 300 * time.Second

// ParseTimestamp checks the timestamp header of a request received at now
// and returns the time it names. It must be decimal Unix seconds (digits
// only: no sign, fraction or exponent) within skew of now, inclusive, counted
// in whole seconds. Thirteen digits is a time in milliseconds, refused with a
// message saying to send seconds. Errors wrap ErrBadTimestamp and say which
// rule failed.
func ParseTimestamp(s string, now time.Time, skew time.Duration) (time.Time, error) {
	if s == "" {
		return time.Time{}, fmt.Errorf("%w: empty; send Unix time in seconds", ErrBadTimestamp)
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return time.Time{}, fmt.Errorf("%w: %.20q is not Unix time in seconds (digits only: no sign, fraction or exponent)", ErrBadTimestamp, s)
		}
	}
	if len(s) == 13 {
		return time.Time{}, fmt.Errorf("%w: %s looks like milliseconds; send Unix time in seconds", ErrBadTimestamp, s)
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %.24s is out of range for Unix seconds", ErrBadTimestamp, s)
	}
	limit := int64(skew / time.Second)
	switch drift := sec - now.Unix(); {
	case drift > limit:
		return time.Time{}, fmt.Errorf("%w: %d is %d seconds ahead of server time %d; at most %d allowed (check the clock)",
			ErrBadTimestamp, sec, drift, now.Unix(), limit)
	case drift < -limit:
		return time.Time{}, fmt.Errorf("%w: %d is %d seconds behind server time %d; at most %d allowed (check the clock)",
			ErrBadTimestamp, sec, -drift, now.Unix(), limit)
	}
	return time.Unix(sec, 0), nil
}
