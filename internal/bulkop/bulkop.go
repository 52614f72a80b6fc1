// Package bulkop holds the rules of bulk domain operations (SPEC §4.1,
// POST /api/domains/bulk/{op}): which operations exist and how each is
// answered, how a request is validated against the domains' TLD rules,
// and what applying an operation changes on a domain. The API validates
// with it and the worker applies with it.
package bulkop

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/domaind/domaind/internal/fault"

	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/registry"
)

// Operations (SPEC §4.1).
const (
	Lock           = "lock"
	Unlock         = "unlock"
	SetNameservers = "setNameservers"
	SetFolder      = "setFolder"
	SetContacts    = "setContacts"
	SetAutoRenew   = "setAutoRenew"
	Renew          = "renew"
	Restore        = "restore"
)

// Kinds of answer (SPEC §2.11).
const (
	// Queued operations run as a task over their items.
	Queued = iota
	// Local operations change the service's own rows at once.
	Local
	// Cart operations add one cart item per domain.
	Cart
)

// Kinds maps every operation to its kind of answer.
var Kinds = map[string]int{
	Lock: Queued, Unlock: Queued, SetNameservers: Queued, SetFolder: Queued, SetContacts: Queued,
	SetAutoRenew: Local,
	Renew:        Cart, Restore: Cart,
}

// Limits of a request.
const (
	MaxDomains     = 1000
	MinNameservers = 2
	MaxNameservers = 13
	MaxFolderRunes = 64
)

// Request is the body of a bulk operation.
type Request struct {
	Domains []string        `json:"domains"`
	Payload json.RawMessage `json:"payload"`
	Options struct {
		SkipOnError *bool `json:"skip_on_error"`
		DryRun      bool  `json:"dry_run"`
	} `json:"options"`
}

// Plan is a validated bulk request.
type Plan struct {
	Op string
	// Domains are the names in ASCII form, in request order, once each.
	Domains     []string
	SkipOnError bool
	DryRun      bool
	// Update is the registry change of lock, unlock, setNameservers and setContacts.
	Update registry.Update
	// Folder is setFolder's folder ("" takes domains out of their folder).
	Folder *string
	// AutoRenew is setAutoRenew's setting.
	AutoRenew bool
	// Years is how long a renewal is for.
	Years int
}

// Parse validates a request for op: the domain list and the payload's
// shape. Rules that depend on each domain's TLD or state are checked by
// Plan.Check once the domains are loaded.
func Parse(op string, req Request) (Plan, error) {
	if _, ok := Kinds[op]; !ok {
		return Plan{}, fault.Invalid("op", "unknown operation %q; one of lock, unlock, setNameservers, setFolder, setContacts, setAutoRenew, renew, restore", op)
	}
	p := Plan{Op: op, SkipOnError: true, DryRun: req.Options.DryRun}
	if req.Options.SkipOnError != nil {
		p.SkipOnError = *req.Options.SkipOnError
	}
	if err := p.parseDomains(req.Domains); err != nil {
		return p, err
	}
	return p, p.parsePayload(req.Payload)
}

func (p *Plan) parseDomains(in []string) error {
	switch {
	case len(in) == 0:
		return fault.Invalid("domains", "must list 1 to %d domains", MaxDomains)
	case len(in) > MaxDomains:
		return fault.Invalid("domains", "lists %d domains; at most %d per request", len(in), MaxDomains)
	}
	seen := make(map[string]bool, len(in))
	for i, raw := range in {
		n, err := domainname.Parse(raw)
		if err != nil {
			return fault.Invalid(fmt.Sprintf("domains[%d]", i), "%v", err)
		}
		if !n.IsRegistrable() {
			return fault.Invalid(fmt.Sprintf("domains[%d]", i), "%q is not a registered name (did you mean %s?)", raw, n.Registrable)
		}
		if !seen[n.ASCII] {
			seen[n.ASCII] = true
			p.Domains = append(p.Domains, n.ASCII)
		}
	}
	return nil
}

// payloadKeys are the payload fields of each operation. The API refuses
// unknown fields everywhere, and a field another operation takes is
// unknown here: it would otherwise be silently ignored.
var payloadKeys = map[string][]string{
	Lock: {}, Unlock: {}, Restore: {},
	SetNameservers: {"nameservers"},
	SetFolder:      {"folder"},
	SetContacts:    {"contacts"},
	SetAutoRenew:   {"auto_renew"},
	Renew:          {"years"},
}

// payload holds every op's payload keys; each op reads its own.
type payload struct {
	Nameservers []string                   `json:"nameservers"`
	Folder      *string                    `json:"folder"`
	Contacts    map[string]json.RawMessage `json:"contacts"`
	AutoRenew   *bool                      `json:"auto_renew"`
	Years       *int                       `json:"years"`
}

func (p *Plan) parsePayload(raw json.RawMessage) error {
	var in payload
	if len(raw) > 0 && string(raw) != "null" {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return fault.Invalid("payload", "must be an object with the operation's fields")
		}
		for k := range fields {
			if !slices.Contains(payloadKeys[p.Op], k) {
				return fault.Invalid("payload."+k, "is not a field of %s (%s)", p.Op, describeKeys(payloadKeys[p.Op]))
			}
		}
		if err := json.Unmarshal(raw, &in); err != nil {
			return fault.Invalid("payload", "must be an object with the operation's fields: %v", jsonProblem(err))
		}
	}
	switch p.Op {
	case Lock, Unlock:
		locked := p.Op == Lock
		p.Update.Locked = &locked
	case SetNameservers:
		ns, err := parseNameservers(in.Nameservers)
		if err != nil {
			return err
		}
		p.Update.Nameservers = ns
	case SetFolder:
		if in.Folder == nil {
			return fault.Invalid("payload.folder", "is required (an empty string takes the domains out of their folder)")
		}
		f := strings.TrimSpace(*in.Folder)
		if n := utf8.RuneCountInString(f); n > MaxFolderRunes {
			return fault.Invalid("payload.folder", "is %d characters; at most %d", n, MaxFolderRunes)
		}
		if strings.ContainsFunc(f, func(r rune) bool { return !unicode.IsPrint(r) }) {
			return fault.Invalid("payload.folder", "must be printable text")
		}
		p.Folder = &f
	case SetContacts:
		contacts, err := parseContacts(in.Contacts)
		if err != nil {
			return err
		}
		p.Update.Contacts = contacts
	case SetAutoRenew:
		if in.AutoRenew == nil {
			return fault.Invalid("payload.auto_renew", "is required: true or false")
		}
		p.AutoRenew = *in.AutoRenew
	case Renew:
		p.Years = 1
		if in.Years != nil {
			if *in.Years < 1 || *in.Years > 10 {
				return fault.Invalid("payload.years", "must be a whole number of years from 1 to 10")
			}
			p.Years = *in.Years
		}
	}
	return nil
}

// describeKeys says which payload fields an operation takes.
func describeKeys(keys []string) string {
	if len(keys) == 0 {
		return "it takes no payload"
	}
	return "it takes " + strings.Join(keys, ", ")
}

func parseNameservers(in []string) ([]string, error) {
	if len(in) < MinNameservers || len(in) > MaxNameservers {
		return nil, fault.Invalid("payload.nameservers", "must list %d to %d host names, not %d", MinNameservers, MaxNameservers, len(in))
	}
	var out []string
	for i, raw := range in {
		h, err := domainname.ParseHost(raw)
		if err != nil {
			return nil, fault.Invalid(fmt.Sprintf("payload.nameservers[%d]", i), "%v", err)
		}
		if slices.Contains(out, h) {
			return nil, fault.Invalid(fmt.Sprintf("payload.nameservers[%d]", i), "%s is listed twice", h)
		}
		out = append(out, h)
	}
	return out, nil
}

var (
	handlePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{2,39}$`)
	phonePattern  = regexp.MustCompile(`^\+[0-9]{1,3}\.[0-9]{4,14}$`)
	countryCode   = regexp.MustCompile(`^[A-Z]{2}$`)
)

// parseContacts reads {role: "HANDLE"} or {role: {name, email, ...}}.
func parseContacts(in map[string]json.RawMessage) (map[string]registry.Contact, error) {
	if len(in) == 0 {
		return nil, fault.Invalid("payload.contacts", "must give a contact for at least one role of %s", strings.Join(registry.Roles, ", "))
	}
	out := map[string]registry.Contact{}
	for role, raw := range in {
		field := "payload.contacts." + role
		if !slices.Contains(registry.Roles, role) {
			return nil, fault.Invalid(field, "unknown role; roles are %s", strings.Join(registry.Roles, ", "))
		}
		var handle string
		if json.Unmarshal(raw, &handle) == nil {
			if !handlePattern.MatchString(handle) {
				return nil, fault.Invalid(field, "handle must be 3 to 40 letters, digits, '-' or '_'")
			}
			out[role] = registry.Contact{Handle: handle}
			continue
		}
		var d registry.ContactDetails
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d); err != nil {
			return nil, fault.Invalid(field, "must be a contact handle or an object {name, organization, email, phone, street, city, postal_code, country}: %v", jsonProblem(err))
		}
		if err := checkDetails(field, &d); err != nil {
			return nil, err
		}
		out[role] = registry.Contact{Details: &d}
	}
	return out, nil
}

func checkDetails(field string, d *registry.ContactDetails) error {
	for name, v := range map[string]*string{"name": &d.Name, "organization": &d.Organization, "email": &d.Email,
		"phone": &d.Phone, "street": &d.Street, "city": &d.City, "postal_code": &d.PostalCode, "country": &d.Country} {
		*v = strings.TrimSpace(*v)
		if *v == "" && name != "organization" {
			return fault.Invalid(field+"."+name, "is required")
		}
		if utf8.RuneCountInString(*v) > 255 || strings.ContainsFunc(*v, func(r rune) bool { return !unicode.IsPrint(r) }) {
			return fault.Invalid(field+"."+name, "must be printable text of at most 255 characters")
		}
	}
	d.Country = strings.ToUpper(d.Country)
	switch at := strings.LastIndexByte(d.Email, '@'); {
	case at < 1 || at == len(d.Email)-1 || strings.ContainsAny(d.Email, " <>"):
		return fault.Invalid(field+".email", "is not an email address")
	case !phonePattern.MatchString(d.Phone):
		return fault.Invalid(field+".phone", "must be in the form +CC.NUMBER, e.g. +1.5555550100")
	case !countryCode.MatchString(d.Country):
		return fault.Invalid(field+".country", "must be an ISO 3166-1 alpha-2 code, e.g. NL")
	}
	return nil
}

// jsonProblem is a decoding error without Go's type names.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s has the wrong type", te.Field)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
