package rdap

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/domaind/domaind/internal/domaininfo"
)

// domainObject is the part of an RDAP domain object (RFC 9083 §5.3) the
// service reads.
type domainObject struct {
	ObjectClassName string       `json:"objectClassName"`
	LDHName         string       `json:"ldhName"`
	Status          []string     `json:"status"`
	Events          []event      `json:"events"`
	Entities        []entity     `json:"entities"`
	Nameservers     []nameserver `json:"nameservers"`
	Links           []link       `json:"links"`
}

type event struct {
	Action string `json:"eventAction"`
	Date   string `json:"eventDate"`
}

type entity struct {
	Handle   string          `json:"handle"`
	Roles    []string        `json:"roles"`
	VCard    json.RawMessage `json:"vcardArray"`
	Entities []entity        `json:"entities"`
}

type nameserver struct {
	LDHName string `json:"ldhName"`
}

type link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
	Type string `json:"type"`
}

// Parse decodes one RDAP domain object into a Record.
func Parse(data []byte) (domaininfo.Record, error) {
	rec, _, err := parse(data)
	return rec, err
}

func parse(data []byte) (domaininfo.Record, []link, error) {
	var d domainObject
	if err := json.Unmarshal(data, &d); err != nil {
		return domaininfo.Record{}, nil, fmt.Errorf("rdap: decode domain: %w", err)
	}
	if d.ObjectClassName != "" && !strings.EqualFold(d.ObjectClassName, "domain") {
		return domaininfo.Record{}, nil, fmt.Errorf("rdap: object class %q, want domain", d.ObjectClassName)
	}
	name := hostname(d.LDHName)
	if name == "" {
		return domaininfo.Record{}, nil, errors.New("rdap: domain object without ldhName")
	}
	rec := domaininfo.Record{Domain: name, Source: domaininfo.SourceRDAP}
	for _, s := range d.Status {
		if s = strings.ToLower(strings.TrimSpace(s)); s != "" && !slices.Contains(rec.Statuses, s) {
			rec.Statuses = append(rec.Statuses, s)
		}
	}
	for _, e := range d.Events {
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(e.Date))
		if err != nil {
			continue // an unreadable date is unknown, not fatal
		}
		switch strings.ToLower(strings.TrimSpace(e.Action)) {
		case "registration":
			rec.Created = t.UTC()
		case "expiration":
			rec.Expires = t.UTC()
		case "last changed":
			rec.Updated = t.UTC()
		}
	}
	for _, ns := range d.Nameservers {
		if h := hostname(ns.LDHName); h != "" && !slices.Contains(rec.Nameservers, h) {
			rec.Nameservers = append(rec.Nameservers, h)
		}
	}
	walkEntities(d.Entities, func(e entity, card vcard) {
		switch {
		case hasRole(e, "registrar") && rec.Registrar == "":
			rec.Registrar = firstNonEmpty(card.fn, card.org, e.Handle)
		case hasRole(e, "registrant") && rec.Registrant == "":
			rec.Registrant = firstNonEmpty(card.fn, card.org, e.Handle)
		}
		for _, m := range card.emails {
			if !slices.Contains(rec.Emails, m) {
				rec.Emails = append(rec.Emails, m)
			}
		}
	})
	return rec, d.Links, nil
}

// walkEntities calls fn for every entity, nested ones included, depth first.
func walkEntities(es []entity, fn func(entity, vcard)) {
	for _, e := range es {
		fn(e, parseVCard(e.VCard))
		walkEntities(e.Entities, fn)
	}
}

func hasRole(e entity, role string) bool {
	return slices.ContainsFunc(e.Roles, func(r string) bool { return strings.EqualFold(strings.TrimSpace(r), role) })
}

// vcard is what the service reads of a jCard (RFC 7095).
type vcard struct {
	fn, org string
	emails  []string
}

// parseVCard reads ["vcard", [[name, params, type, value, ...], ...]],
// skipping whatever does not have that shape.
func parseVCard(raw json.RawMessage) vcard {
	var card vcard
	var top []json.RawMessage
	if json.Unmarshal(raw, &top) != nil || len(top) != 2 {
		return card
	}
	var props [][]json.RawMessage
	if json.Unmarshal(top[1], &props) != nil {
		return card
	}
	for _, p := range props {
		if len(p) < 4 {
			continue
		}
		var name string
		if json.Unmarshal(p[0], &name) != nil {
			continue
		}
		value := firstText(p[3])
		switch strings.ToLower(name) {
		case "fn":
			card.fn = value
		case "org":
			card.org = value
		case "email":
			if m := strings.ToLower(value); strings.Contains(m, "@") && !strings.ContainsAny(m, " \t") {
				card.emails = append(card.emails, m)
			}
		}
	}
	return card
}

// firstText is a jCard value as text: a string, or the first non-empty
// string of a structured value.
func firstText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) == nil {
		for _, p := range parts {
			if t := firstText(p); t != "" {
				return t
			}
		}
	}
	return ""
}

// hostname is a DNS name lower-cased without its trailing dot.
func hostname(s string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(s), "."))
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
