package domaininfo

import (
	"reflect"
	"testing"
	"time"
)

func TestAddRegistrar(t *testing.T) {
	created := time.Date(2001, 2, 3, 0, 0, 0, 0, time.UTC)
	registry := Record{Domain: "a.com", Registrar: "Registrar Inc.", Statuses: []string{"ok"}, Emails: []string{"abuse@reg.test"}, Created: created}
	registrar := Record{Domain: "a.com", Registrar: "Other name", Registrant: "A Corp", Statuses: []string{"client hold"},
		Emails: []string{"abuse@reg.test", "owner@a.com"}, Created: created.AddDate(1, 0, 0), Expires: created.AddDate(10, 0, 0),
		Nameservers: []string{"ns1.a.com"}}
	got := registry.AddRegistrar(registrar)
	want := Record{Domain: "a.com", Registrar: "Registrar Inc.", Registrant: "A Corp", Statuses: []string{"ok"},
		Emails: []string{"abuse@reg.test", "owner@a.com"}, Created: created, Expires: created.AddDate(10, 0, 0),
		Nameservers: []string{"ns1.a.com"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	if len(registry.Emails) != 1 {
		t.Errorf("the registry record was changed: %v", registry.Emails)
	}
}
