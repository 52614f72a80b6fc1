package bulkop

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/domaind/domaind/internal/fault"

	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/models"
)

// maxNamed is how many offending domains an error names.
const maxNamed = 20

// Check applies the rules that depend on each domain (the user's rows, by
// name) and its TLD (the synced rules, by name): nameserver counts,
// renewal years, restores only in redemption and renewals never, and the
// TLD's registrant rules. The error names the domains at fault.
func (p Plan) Check(domains map[string]models.Domain, tlds map[string]models.TLD) error {
	problems := map[string][]string{} // problem → domains
	var order []string
	add := func(problem, domain string) {
		if _, ok := problems[problem]; !ok {
			order = append(order, problem)
		}
		problems[problem] = append(problems[problem], domain)
	}
	for _, name := range p.Domains {
		d := domains[name]
		md := tlds[d.TLD].Metadata
		switch p.Op {
		case SetNameservers:
			if n := len(p.Update.Nameservers); md.MinNameservers > 0 && n < md.MinNameservers || md.MaxNameservers > 0 && n > md.MaxNameservers {
				add(fmt.Sprintf(".%s takes %d to %d nameservers", d.TLD, md.MinNameservers, md.MaxNameservers), name)
			}
		case Renew:
			switch {
			case d.Status == models.DomainRedemption:
				add("in redemption: restore it instead of renewing", name)
			case len(md.AllowedYears) > 0 && !slices.Contains(md.AllowedYears, p.Years):
				add(fmt.Sprintf(".%s renews for %s years, not %d", d.TLD, joinInts(md.AllowedYears), p.Years), name)
			}
		case Restore:
			if d.Status != models.DomainRedemption {
				add("not in redemption: only a deleted domain in its redemption period can be restored", name)
			}
		case SetContacts:
			reg, ok := p.Update.Contacts["registrant"]
			if !ok || reg.Details == nil {
				continue
			}
			if md.OrganizationRequired && reg.Details.Organization == "" {
				add(fmt.Sprintf(".%s needs an organisation as registrant", d.TLD), name)
			}
			if len(md.AllowedCountries) > 0 && !slices.Contains(md.AllowedCountries, reg.Details.Country) {
				add(fmt.Sprintf(".%s takes registrants from %s only", d.TLD, strings.Join(md.AllowedCountries, ", ")), name)
			}
		}
	}
	if len(order) == 0 {
		return nil
	}
	var msgs []string
	for _, problem := range order {
		msgs = append(msgs, problem+": "+Names(problems[problem]))
	}
	return fault.Invalid(p.payloadField(), "%s", strings.Join(msgs, "; "))
}

// payloadField is the field a rule failure is charged to.
func (p Plan) payloadField() string {
	switch p.Op {
	case SetNameservers:
		return "payload.nameservers"
	case Renew:
		return "payload.years"
	case SetContacts:
		return "payload.contacts"
	}
	return "domains"
}

// Names lists domains for a message, naming at most 20.
func Names(domains []string) string {
	if len(domains) <= maxNamed {
		return strings.Join(domains, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(domains[:maxNamed], ", "), len(domains)-maxNamed)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// Change describes what the plan changes on d, as "field: before → after"
// ("unchanged" when d already is that way).
func (p Plan) Change(d models.Domain) string {
	var before, after, field string
	switch p.Op {
	case Lock, Unlock:
		field, before, after = "lock", lockWord(d.Locked), lockWord(*p.Update.Locked)
	case SetNameservers:
		field, before, after = "nameservers", listOrNone(d.Nameservers), listOrNone(p.Update.Nameservers)
	case SetFolder:
		field, before, after = "folder", orNone(d.Folder), orNone(*p.Folder)
	case SetContacts:
		var b, a []string
		for _, role := range registry.Roles {
			if c, ok := p.Update.Contacts[role]; ok {
				b = append(b, role+"="+contactWord(d.Contacts[role]))
				a = append(a, role+"="+contactWord(c))
			}
		}
		field, before, after = "contacts", strings.Join(b, " "), strings.Join(a, " ")
	default:
		return ""
	}
	if before == after {
		return field + ": unchanged (" + after + ")"
	}
	return field + ": " + before + " → " + after
}

// Column is the column of models.Domain the op changes.
func (p Plan) Column() string {
	switch p.Op {
	case Lock, Unlock:
		return "locked"
	case SetNameservers:
		return "nameservers"
	case SetFolder:
		return "folder"
	case SetContacts:
		return "contacts"
	}
	return ""
}

// Rivals are the queued operations that change what op changes (lock and
// unlock; each other op alone), op included: two of them on one domain
// must not be applied at once.
func Rivals(op string) []string {
	column := Plan{Op: op}.Column()
	var ops []string
	for o, kind := range Kinds {
		if kind == Queued && (Plan{Op: o}).Column() == column {
			ops = append(ops, o)
		}
	}
	slices.Sort(ops)
	return ops
}

// Apply sets on d what the plan changed at the registry.
func (p Plan) Apply(d *models.Domain) {
	switch p.Op {
	case Lock, Unlock:
		d.Locked = *p.Update.Locked
	case SetNameservers:
		d.Nameservers = p.Update.Nameservers
	case SetFolder:
		d.Folder = *p.Folder
	case SetContacts:
		contacts := maps.Clone(d.Contacts)
		if contacts == nil {
			contacts = map[string]registry.Contact{}
		}
		maps.Copy(contacts, p.Update.Contacts)
		d.Contacts = contacts
	}
}

func lockWord(locked bool) string {
	if locked {
		return "locked"
	}
	return "unlocked"
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func listOrNone(xs []string) string { return orNone(strings.Join(xs, ", ")) }

func contactWord(c registry.Contact) string {
	if c.Details != nil {
		return fmt.Sprintf("new contact %q", c.Details.Name)
	}
	return orNone(c.Handle)
}

// FromRow is the plan of a queued bulk op, as the worker applies it.
func FromRow(b models.BulkOp) Plan {
	return Plan{Op: b.Op, SkipOnError: b.SkipOnError, DryRun: b.DryRun, Update: b.Update, Folder: b.Folder}
}

// NeedsRegistry reports whether the op changes the registry (setFolder
// changes only the service's own rows).
func (p Plan) NeedsRegistry() bool { return p.Op != SetFolder }
