package whois

import (
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	tests := []struct {
		in         string
		monthFirst bool
		want       string // RFC 3339; "" when the value is no date
	}{
		{in: "2003/03/17", want: "2003-03-17T00:00:00Z"},
		{in: "17-Mar-2003", want: "2003-03-17T00:00:00Z"},
		{in: "2003-03-17 12:00:00 (JST)", want: "2003-03-17T03:00:00Z"},
		{in: "before Aug-1996", want: "1996-08-01T00:00:00Z"},
		{in: "before 1 January 1996", want: "1996-01-01T00:00:00Z"},
		{in: "20030317", want: "2003-03-17T00:00:00Z"},
		{in: "17.03.2003", want: "2003-03-17T00:00:00Z"},
		{in: "4.7.2020 10:15:55", want: "2020-07-04T10:15:55Z"},
		{in: "03/02/2020", want: "2020-02-03T00:00:00Z"},
		{in: "03/02/2020", monthFirst: true, want: "2020-03-02T00:00:00Z"},
		{in: "12/18/2001", want: "2001-12-18T00:00:00Z"}, // 18 can only be the day
		{in: "16/09/03", want: "2003-09-16T00:00:00Z"},
		{in: "2003-03-17T12:00:00+09:00", want: "2003-03-17T03:00:00Z"},
		{in: "1997-09-15T00:00:00-0700", want: "1997-09-15T07:00:00Z"},
		{in: "2011-07-21 18:03:50+03", want: "2011-07-21T15:03:50Z"},
		{in: "2010-07-04 04:34:46 +03:00", want: "2010-07-04T01:34:46Z"},
		{in: "2002-10-22 17:48:23 CLST", want: "2002-10-22T20:48:23Z"},
		{in: "2021-11-09 00:00:00 (UTC+8)", want: "2021-11-08T16:00:00Z"},
		{in: "1999-06-07 13:01:43 (GMT+0:00)", want: "1999-06-07T13:01:43Z"},
		{in: "2020-10-31 (YYYY-MM-DD)", want: "2020-10-31T00:00:00Z"},
		{in: "2007. 03. 02.", want: "2007-03-02T00:00:00Z"},
		{in: "30th April 2003 at 00:00:00.000", want: "2003-04-30T00:00:00Z"},
		{in: "Tue Dec 12 2000", want: "2000-12-12T00:00:00Z"},
		{in: "October  9 2012", want: "2012-10-09T00:00:00Z"},
		{in: "13-MAY-2009", want: "2009-05-13T00:00:00Z"},
		{in: "2001-Aug-23.", want: "2001-08-23T00:00:00Z"},
		{in: "19990717 #175298", want: "1999-07-17T00:00:00Z"},
		{in: "see at www.register.bg"},
		{in: "31.02.2020"},
		{in: "13/13/2020"},
	}
	for _, tc := range tests {
		got, ok := parseDate(tc.in, tc.monthFirst)
		if tc.want == "" {
			if ok {
				t.Errorf("parseDate(%q) = %v, want no date", tc.in, got)
			}
			continue
		}
		if want := date(tc.want); !ok || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("parseDate(%q, %v) = %v, %v; want %v", tc.in, tc.monthFirst, got, ok, want)
		}
	}
}
