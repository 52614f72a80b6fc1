// Package domaininfo holds the registration record a WHOIS or RDAP lookup
// produces, so both protocols fill the same shape (SPEC §2.6).
package domaininfo

import (
	"errors"
	"slices"
	"strings"
	"time"
)

// Source says which protocol answered a lookup; the values are the spec's
// raw_source enum.
type Source string

// The two sources a record can come from.
const (
	SourceRDAP     Source = "RDAP"
	SourceFallback Source = "FallbackProvider"
)

// ErrNotFound means the authoritative server answered that it holds no
// object for the name. It is an answer, not a failure: callers must not
// retry it, and must not read it as "available" (reserved and premium names
// can be unregistered and still not for sale).
var ErrNotFound = errors.New("no registration data for this domain")

// Record is what a lookup learned about one registered domain. Fields the
// server did not give are empty (zero time, empty string, nil slice).
type Record struct {
	// Domain is the name as the server spelled it, lower-case ASCII.
	Domain string `json:"domain"`
	// Statuses are the EPP or RDAP status values, lower case, in server order.
	Statuses []string `json:"statuses,omitempty"`
	// Registrar is the sponsoring registrar's name.
	Registrar string `json:"registrar,omitempty"`
	// Registrant is the registrant's name or organisation when published.
	Registrant  string    `json:"registrant,omitempty"`
	Created     time.Time `json:"created,omitzero"`
	Expires     time.Time `json:"expires,omitzero"`
	Updated     time.Time `json:"updated,omitzero"`
	Nameservers []string  `json:"nameservers,omitempty"`
	// Emails are the distinct contact addresses found, abuse contacts included.
	Emails []string `json:"emails,omitempty"`
	Source Source   `json:"source"`
}

// AddRegistrar returns r, the registry's answer, completed with the
// registrar's answer about the same domain: the registrar knows the
// registrant and its contacts, the registry is authoritative for the rest
// and only its gaps are filled.
func (r Record) AddRegistrar(registrar Record) Record {
	out := r
	if registrar.Registrant != "" {
		out.Registrant = registrar.Registrant
	}
	out.Emails = slices.Clone(r.Emails)
	for _, m := range registrar.Emails {
		if !slices.Contains(out.Emails, m) {
			out.Emails = append(out.Emails, m)
		}
	}
	if out.Registrar == "" {
		out.Registrar = registrar.Registrar
	}
	if len(out.Statuses) == 0 {
		out.Statuses = registrar.Statuses
	}
	if len(out.Nameservers) == 0 {
		out.Nameservers = registrar.Nameservers
	}
	for _, d := range [][2]*time.Time{{&out.Created, &registrar.Created}, {&out.Expires, &registrar.Expires}, {&out.Updated, &registrar.Updated}} {
		if d[0].IsZero() {
			*d[0] = *d[1]
		}
	}
	return out
}

// Result is a record in the shape of SPEC §2.6: string fields, an empty
// string or an empty list for what the server did not give.
type Result struct {
	Domain         string   `json:"domain"`
	Status         string   `json:"status"`
	Registrar      string   `json:"registrar"`
	Registrant     string   `json:"registrant"`
	CreationDate   string   `json:"creation_date"`
	ExpirationDate string   `json:"expiration_date"`
	UpdateDate     string   `json:"update_date"`
	Nameservers    []string `json:"nameservers"`
	Emails         []string `json:"emails"`
	RawSource      string   `json:"raw_source"`
}

// Result returns r in SPEC §2.6's shape.
func (r Record) Result() Result {
	return Result{
		Domain: r.Domain, Status: strings.Join(r.Statuses, ", "),
		Registrar: r.Registrar, Registrant: r.Registrant,
		CreationDate: FormatDate(r.Created), ExpirationDate: FormatDate(r.Expires), UpdateDate: FormatDate(r.Updated),
		Nameservers: nonNil(r.Nameservers), Emails: nonNil(r.Emails), RawSource: string(r.Source),
	}
}

// FormatDate is t in RFC 3339 and UTC, or "" for an unknown date.
func FormatDate(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
