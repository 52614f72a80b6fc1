package registry

import (
	"slices"
)

// specFeatures are the features SPEC §2.8 names, in the order they are listed.
var specFeatures = []string{"CREATE", "RENEW", "TRANSFER", "UPDATE", "DELETE", "RESTORE", "PRIVACY_PROTECT"}

// Defaults used when the registry leaves a rule out.
const (
	defaultMaxNameservers = 13
	defaultPremiumSupport = "NO"
)

// ToMetadata maps a TLD's registry rules onto SPEC §2.8. The registry gives
// periods in months and no minimum or maximum, so those are derived; years
// are the periods that are whole years. Lists are never null, and features
// the spec does not name are dropped.
func (info TLDInfo) ToMetadata() Metadata {
	md := info.Metadata
	m := Metadata{
		Provider:                 info.Provider,
		PeriodsMonths:            sortedUnique(md.CreateDomainPeriods),
		AllowedYears:             []int{},
		OrganizationAllowed:      true,
		AllowedCountries:         []string{},
		MaxNameservers:           defaultMaxNameservers,
		PremiumSupport:           md.PremiumSupport,
		TransferRequiresAuthcode: md.TransferRequiresAuthcode,
		FeaturesAvailable:        []string{},
	}
	if len(m.PeriodsMonths) > 0 {
		m.MinPeriodMonths, m.MaxPeriodMonths = m.PeriodsMonths[0], m.PeriodsMonths[len(m.PeriodsMonths)-1]
	}
	for _, p := range m.PeriodsMonths {
		if p%12 == 0 {
			m.AllowedYears = append(m.AllowedYears, p/12)
		}
	}
	if len(m.AllowedYears) > 0 {
		m.MinYears, m.MaxYears = m.AllowedYears[0], m.AllowedYears[len(m.AllowedYears)-1]
	}
	if r := md.Registrant; r != nil {
		m.OrganizationRequired, m.OrganizationAllowed = r.OrganizationRequired, r.OrganizationAllowed || r.OrganizationRequired
		if r.AllowedCountries != nil {
			m.AllowedCountries = slices.Clone(r.AllowedCountries)
		}
	}
	if ns := md.Nameservers; ns != nil {
		m.MinNameservers, m.MaxNameservers, m.NameserversRequired = ns.Min, ns.Max, ns.Required
	}
	if ds := md.DomainSyntax; ds != nil {
		m.IDNSupport = ds.IDNSupport
	}
	if m.PremiumSupport == "" {
		m.PremiumSupport = defaultPremiumSupport
	}
	for _, f := range specFeatures {
		if slices.Contains(md.FeaturesAvailable, f) {
			m.FeaturesAvailable = append(m.FeaturesAvailable, f)
		}
	}
	return m
}

func sortedUnique(xs []int) []int {
	out := slices.Clone(xs)
	slices.Sort(out)
	out = slices.Compact(out)
	if out == nil {
		out = []int{}
	}
	return out
}
