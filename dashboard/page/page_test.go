package page

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Amounts on the pages: thousands grouped, refunds negative, also under
// a unit.
func TestMoney(t *testing.T) {
	for _, tc := range []struct {
		cents int64
		want  string
	}{
		{123_456, "1,234.56 USD"},
		{5, "0.05 USD"},
		{0, "0.00 USD"},
		{-50, "-0.50 USD"},
		{-1_234, "-12.34 USD"},
		{99_900, "999.00 USD"},
		{100_000_000_05, "100,000,000.05 USD"},
		{-123_456_78, "-123,456.78 USD"},
	} {
		if got := Money("USD", tc.cents); got != tc.want {
			t.Errorf("Money(USD, %d) = %q, want %q", tc.cents, got, tc.want)
		}
	}
}

// Each part of the site has its header: the console's links under /ops,
// the site's elsewhere, none on a buyer's pages; the page the person is
// on is marked, and only that one.
func TestHeaderNamesWhereYouAre(t *testing.T) {
	for _, tc := range []struct{ here, label, current string }{
		{"/ops/payouts", "Operations", "Payouts"},
		{"/ops", "Operations", "Operations"},
		{"/market", "Site", "Marketplace"},
		{"/account", "Site", "Account"},
		{"/r/unknown", "Site", ""},
		{"", "", ""},
	} {
		h := newHead("A page", tc.here)
		var current []string
		for _, l := range h.Links {
			if l.Current {
				current = append(current, l.Text)
			}
		}
		if h.Label != tc.label || strings.Join(current, ",") != tc.current || h.Title != "A page" {
			t.Errorf("head at %q = %+v, want the %q links with %q current", tc.here, h, tc.label, tc.current)
		}
	}
	rec := httptest.NewRecorder()
	if err := Render(rec, 404, "error.html", Error{Title: "Page not found", Status: 404, Path: "/ops/nothing"}, ""); err != nil {
		t.Fatal(err)
	}
	body := rec.Body.String()
	if rec.Code != 404 || !strings.Contains(body, `<nav aria-label="Operations">`) || !strings.Contains(body, `<a href="/ops/payouts">Payouts</a>`) ||
		strings.Contains(body, "aria-current") || rec.Header().Get("Content-Security-Policy") != Policy {
		t.Errorf("the error page under /ops = %d %s", rec.Code, body)
	}
}

// How long something took, as the pages write it: nothing for none.
func TestTook(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "", -time.Second: "", 1234567 * time.Microsecond: "1.235s", 42 * time.Millisecond: "42ms"} {
		if got := Took(d); got != want {
			t.Errorf("Took(%s) = %q, want %q", d, got, want)
		}
	}
}
