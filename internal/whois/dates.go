package whois

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// dateLayouts are the date formats WHOIS servers use, tried after
// parseDate has tidied the value (zone names read, ordinals, "at" and
// runs of spaces gone). Numeric day-month orders are read by numericDate.
var dateLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05.999999999-0700", "2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999 Z07:00", "2006-01-02 15:04:05.999999999-07",
	"2006-01-02 15:04:05.999999999", "2006-01-02 15:04", "2006-01-02",
	"2006/01/02 15:04:05", "2006/01/02", "2006.01.02 15:04:05", "2006.01.02", "20060102 15:04:05", "20060102",
	"02-Jan-2006", "2-Jan-2006", "02-Jan-2006 15:04:05", "2006-Jan-02", "2 Jan 2006", "2 Jan 2006 15:04:05.999999999",
	"2 January 2006", "2 January 2006 15:04:05.999999999", "January 2 2006", "Jan 2 2006", "Mon Jan 2 2006", "Mon Jan 2 15:04:05 MST 2006",
	"Jan-2006", "2-January-2006", "2 Jan 2006 15:04", time.ANSIC,
}

// zoneOffsets are the zone names registries print after local times
// ("2019/06/01 04:52:02 (JST)"), in seconds east of UTC. Ambiguous names
// (CST, IST) are left out: such a time is read as UTC.
var zoneOffsets = map[string]int{
	"UTC": 0, "GMT": 0, "Z": 0, "JST": 9 * 3600, "KST": 9 * 3600, "HKT": 8 * 3600,
	"CET": 3600, "CEST": 2 * 3600, "EET": 2 * 3600, "EEST": 3 * 3600, "MSK": 3 * 3600,
	"EAT": 3 * 3600, "WAT": 3600, "CLT": -4 * 3600, "CLST": -3 * 3600, "EST": -5 * 3600, "EDT": -4 * 3600, "PST": -8 * 3600, "PDT": -7 * 3600,
	"AEST": 10 * 3600, "AEDT": 11 * 3600, "NZST": 12 * 3600, "NZDT": 13 * 3600,
}

var (
	// trailingZone is a zone after the time: "(JST)", "CLST", "(UTC+8)",
	// "(GMT+0:00)".
	trailingZone = regexp.MustCompile(`\s+\(?([A-Z]{1,4}T?|UTC|GMT)([+-]\d{1,2}(?::?\d{2})?)?\)?$`)
	// formatHint is a reminder of the layout: "(YYYY-MM-DD)",
	// "(dd/mm/yyyy)".
	formatHint = regexp.MustCompile(`(?i)\s*\([ymdhs/ :.-]+\)$`)
	// ordinal is "30th" in "30th April 2003".
	ordinal = regexp.MustCompile(`\b(\d{1,2})(st|nd|rd|th)\b`)
	// numeric is a day and month in either order with a 2- or 4-digit
	// year, and maybe a time: "17.03.2003", "30/10/2002 00:00:00",
	// "12/18/2001", "16/09/03".
	numeric = regexp.MustCompile(`^(\d{1,2})[./-](\d{1,2})[./-](\d{4}|\d{2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$`)
	// spacedDots is KISA's "2007. 03. 02.".
	spacedDots = regexp.MustCompile(`^(\d{4})\. ?(\d{1,2})\. ?(\d{1,2})\.?$`)
)

// parseDate reads a WHOIS date in UTC. A time without a zone is taken as
// UTC; monthFirst reads an ambiguous "03/02/2020" as March 2 (the day
// comes first otherwise). "before 1 January 1996" is read as its bound.
func parseDate(v string, monthFirst bool) (time.Time, bool) {
	v = strings.Join(strings.Fields(strings.NewReplacer(",", " ", `"`, "").Replace(v)), " ") // "7th April, 2018"
	v = strings.TrimSuffix(strings.Replace(v, "-T", "T", 1), ".")                            // "2019-05-17-T23:02:50Z", "2001-Aug-23."
	v = strings.TrimPrefix(strings.TrimPrefix(v, "before "), "Before ")
	v = formatHint.ReplaceAllString(v, "")
	v = ordinal.ReplaceAllString(strings.Replace(v, " at ", " ", 1), "$1")
	if m := spacedDots.FindStringSubmatch(v); m != nil {
		v = m[1] + "." + pad2(m[2]) + "." + pad2(m[3])
	}
	offset, zoned := 0, false
	if m := trailingZone.FindStringSubmatch(v); m != nil {
		if o, ok := zoneOffset(m[1], m[2]); ok {
			offset, zoned = o, true
			v = v[:len(v)-len(m[0])]
		}
	}
	t, ok := layoutDate(v, monthFirst)
	if !ok {
		if f := strings.Fields(v); len(f) > 1 { // "19990717 #175298"
			t, ok = layoutDate(f[0], monthFirst)
		}
	}
	if !ok {
		return time.Time{}, false
	}
	if zoned {
		t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.FixedZone("", offset))
	}
	return t.UTC(), true
}

func layoutDate(v string, monthFirst bool) (time.Time, bool) {
	if t, ok := numericDate(v, monthFirst); ok {
		return t, true
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// numericDate reads the day-month-year forms; a number over 12 settles
// which is the day, and monthFirst decides when neither is.
func numericDate(v string, monthFirst bool) (time.Time, bool) {
	m := numeric.FindStringSubmatch(v)
	if m == nil {
		return time.Time{}, false
	}
	n := make([]int, len(m))
	for i, s := range m[1:] {
		n[i+1], _ = strconv.Atoi(s)
	}
	day, month, year := n[1], n[2], n[3]
	if day <= 12 && (month > 12 || monthFirst) {
		day, month = month, day
	}
	if len(m[3]) == 2 {
		year += 1900
		if year < 1969 {
			year += 100
		}
	}
	t := time.Date(year, time.Month(month), day, n[4], n[5], n[6], 0, time.UTC)
	if month < 1 || month > 12 || t.Day() != day || n[4] > 23 || n[5] > 59 || n[6] > 59 {
		return time.Time{}, false
	}
	return t, true
}

// zoneOffset is the offset of a zone name with an optional "+8" or
// "+0:00" after it.
func zoneOffset(name, delta string) (int, bool) {
	base, ok := zoneOffsets[name]
	if !ok {
		return 0, false
	}
	if delta == "" {
		return base, true
	}
	sign := 1
	if delta[0] == '-' {
		sign = -1
	}
	digits, mm := strings.ReplaceAll(delta[1:], ":", ""), "0"
	if len(digits) > 2 {
		digits, mm = digits[:len(digits)-2], digits[len(digits)-2:]
	}
	hours, _ := strconv.Atoi(digits)
	mins, _ := strconv.Atoi(mm)
	return base + sign*(hours*3600+mins*60), true
}

func pad2(s string) string {
	if len(s) == 1 {
		return "0" + s
	}
	return s
}
