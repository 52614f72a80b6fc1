package bulkop

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/domaind/domaind/internal/fault"

	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/models"
)

func plan(t *testing.T, op, body string) Plan {
	t.Helper()
	var req Request
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	p, err := Parse(op, req)
	if err != nil {
		t.Fatalf("Parse(%s, %s) = %v", op, body, err)
	}
	return p
}

func TestParseNormalisesTheRequest(t *testing.T) {
	p := plan(t, SetNameservers, `{"domains":["Example.COM","example.com.","BÜCHER.de"],"payload":{"nameservers":["NS1.Host.net","ns2.host.net"]},"options":{"skip_on_error":false}}`)
	if strings.Join(p.Domains, ",") != "example.com,xn--bcher-kva.de" || p.SkipOnError || p.DryRun {
		t.Errorf("plan = %+v", p)
	}
	if strings.Join(p.Update.Nameservers, ",") != "ns1.host.net,ns2.host.net" {
		t.Errorf("nameservers = %v", p.Update.Nameservers)
	}
	if p := plan(t, Lock, `{"domains":["a.com"]}`); !p.SkipOnError || p.Update.Locked == nil || !*p.Update.Locked {
		t.Errorf("lock plan = %+v, want skip_on_error by default and locked", p)
	}
	if p := plan(t, Renew, `{"domains":["a.com"]}`); p.Years != 1 {
		t.Errorf("renew years = %d, want 1 by default", p.Years)
	}
	c := plan(t, SetContacts, `{"domains":["a.com"],"payload":{"contacts":{"tech":"ACME-1","registrant":{"name":"Ada","email":"ada@example.com","phone":"+44.2071234567","street":"1 St","city":"London","postal_code":"N1","country":"gb"}}}}`)
	if c.Update.Contacts["tech"].Handle != "ACME-1" || c.Update.Contacts["registrant"].Details.Country != "GB" {
		t.Errorf("contacts = %+v", c.Update.Contacts)
	}
}

func TestParseNamesTheFieldAtFault(t *testing.T) {
	tests := []struct{ op, body, field string }{
		{"delete", `{"domains":["a.com"]}`, "op"},
		{Lock, `{"domains":[]}`, "domains"},
		{Lock, `{"domains":["a.com","b c"]}`, "domains[1]"},
		{SetNameservers, `{"domains":["a.com"],"payload":{"nameservers":["ns1.a.net"]}}`, "payload.nameservers"},
		{SetNameservers, `{"domains":["a.com"],"payload":{"nameservers":["ns1.a.net","-bad-"]}}`, "payload.nameservers[1]"},
		{SetFolder, `{"domains":["a.com"],"payload":{"folder":"tab\there"}}`, "payload.folder"},
		{SetContacts, `{"domains":["a.com"],"payload":{"contacts":{"tech":{"name":"Ada","email":"ada@example.com","phone":"12345","street":"1 St","city":"London","postal_code":"N1","country":"GB"}}}}`, "payload.contacts.tech.phone"},
		{SetAutoRenew, `{"domains":["a.com"],"payload":{}}`, "payload.auto_renew"},
		{Renew, `{"domains":["a.com"],"payload":{"years":0}}`, "payload.years"},
		{Lock, `{"domains":["a.com"],"payload":[1]}`, "payload"},
		// One rule for the whole API: unknown fields are refused, here too.
		{Lock, `{"domains":["a.com"],"payload":{"reason":"x"}}`, "payload.reason"},
		{Renew, `{"domains":["a.com"],"payload":{"years":1,"yaers":2}}`, "payload.yaers"},
		{SetFolder, `{"domains":["a.com"],"payload":{"folder":"x","nameservers":[]}}`, "payload.nameservers"},
	}
	for _, tc := range tests {
		var req Request
		json.Unmarshal([]byte(tc.body), &req)
		_, err := Parse(tc.op, req)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("Parse(%s, %s) = %v, want an error on %s", tc.op, tc.body, err, tc.field)
		}
	}
}

func TestCheckAppliesEachDomainsTLDRules(t *testing.T) {
	var nl, com models.TLD
	nl.Metadata.MinNameservers, nl.Metadata.MaxNameservers, nl.Metadata.AllowedYears = 2, 3, []int{1}
	com.Metadata.MaxNameservers, com.Metadata.AllowedYears = 13, []int{1, 2, 3}
	tlds := map[string]models.TLD{"nl": nl, "com": com}
	domains := map[string]models.Domain{
		"a.nl":  {Name: "a.nl", TLD: "nl", Status: models.DomainActive},
		"b.com": {Name: "b.com", TLD: "com", Status: models.DomainActive},
		"c.com": {Name: "c.com", TLD: "com", Status: models.DomainRedemption},
	}
	p := plan(t, SetNameservers, `{"domains":["a.nl","b.com"],"payload":{"nameservers":["ns1.x.net","ns2.x.net","ns3.x.net","ns4.x.net"]}}`)
	if err := p.Check(domains, tlds); err == nil || !strings.Contains(err.Error(), ".nl takes 2 to 3 nameservers: a.nl") || strings.Contains(err.Error(), "b.com") {
		t.Errorf("4 nameservers: %v", err)
	}
	p = plan(t, Renew, `{"domains":["a.nl","b.com","c.com"],"payload":{"years":2}}`)
	err := p.Check(domains, tlds)
	if err == nil || !strings.Contains(err.Error(), "in redemption: restore it instead of renewing: c.com") || !strings.Contains(err.Error(), ".nl renews for 1 years, not 2: a.nl") {
		t.Errorf("renew: %v", err)
	}
	if err := plan(t, Restore, `{"domains":["c.com"]}`).Check(domains, tlds); err != nil {
		t.Errorf("restore of a domain in redemption: %v", err)
	}
}

func TestChangeAndApply(t *testing.T) {
	d := models.Domain{Name: "a.com", Nameservers: []string{"ns1.old.net", "ns2.old.net"}, Contacts: map[string]registry.Contact{"admin": {Handle: "OLD-1"}}}
	tests := []struct {
		op, body, change string
		check            func(models.Domain) bool
	}{
		{Lock, `{"domains":["a.com"]}`, "lock: unlocked → locked", func(d models.Domain) bool { return d.Locked }},
		{Unlock, `{"domains":["a.com"]}`, "lock: unchanged (unlocked)", func(d models.Domain) bool { return !d.Locked }},
		{SetNameservers, `{"domains":["a.com"],"payload":{"nameservers":["ns1.new.net","ns2.new.net"]}}`, "nameservers: ns1.old.net, ns2.old.net → ns1.new.net, ns2.new.net",
			func(d models.Domain) bool { return d.Nameservers[0] == "ns1.new.net" }},
		{SetFolder, `{"domains":["a.com"],"payload":{"folder":"work"}}`, "folder: (none) → work", func(d models.Domain) bool { return d.Folder == "work" }},
		{SetContacts, `{"domains":["a.com"],"payload":{"contacts":{"tech":"NEW-1"}}}`, "contacts: tech=(none) → tech=NEW-1",
			func(d models.Domain) bool {
				return d.Contacts["tech"].Handle == "NEW-1" && d.Contacts["admin"].Handle == "OLD-1"
			}},
	}
	for _, tc := range tests {
		p := plan(t, tc.op, tc.body)
		if got := p.Change(d); got != tc.change {
			t.Errorf("%s change = %q, want %q", tc.op, got, tc.change)
		}
		applied := d
		p.Apply(&applied)
		if !tc.check(applied) {
			t.Errorf("%s applied = %+v", tc.op, applied)
		}
	}
	if d.Contacts["tech"].Handle != "" {
		t.Error("Apply changed the contacts of the domain it copied")
	}
}
