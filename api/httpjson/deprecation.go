package httpjson

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// MinSunsetNotice is the least time between a deprecation and the removal
// of what it deprecates (SPEC §8: at least 90 days).
const MinSunsetNotice = 90 * 24 * time.Hour

// Deprecation marks an operation, or a request field, on its way out.
// Answers that use it carry the Deprecation header (RFC 9745), Sunset
// (RFC 8594) once a removal date is set, and Link headers to the notes;
// the OpenAPI document marks it deprecated. The public surface is
// additive-only: nothing is removed before its sunset, announced in
// CHANGELOG.md.
type Deprecation struct {
	Since      time.Time // when it was deprecated
	Sunset     time.Time // when it goes away; zero until decided
	Link       string    // what to use instead (rel="deprecation")
	SunsetLink string    // the removal's notice (rel="sunset"); optional
}

// Check refuses a deprecation the spec does not allow.
func (d Deprecation) Check() error {
	switch {
	case d.Since.IsZero():
		return fmt.Errorf("no deprecation date")
	case d.Link == "":
		return fmt.Errorf("no link to what replaces it")
	case !d.Sunset.IsZero() && d.Sunset.Sub(d.Since) < MinSunsetNotice:
		return fmt.Errorf("sunset %s is less than 90 days after the deprecation on %s",
			d.Sunset.Format(time.DateOnly), d.Since.Format(time.DateOnly))
	}
	return nil
}

// Announce sets the deprecation's headers on an answer.
func (d Deprecation) Announce(h http.Header) {
	h.Set("Deprecation", "@"+strconv.FormatInt(d.Since.Unix(), 10))
	if !d.Sunset.IsZero() {
		h.Set("Sunset", d.Sunset.UTC().Format(http.TimeFormat))
	}
	h.Add("Link", fmt.Sprintf(`<%s>; rel="deprecation"`, d.Link))
	if d.SunsetLink != "" {
		h.Add("Link", fmt.Sprintf(`<%s>; rel="sunset"`, d.SunsetLink))
	}
}
