package sandbox

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

var labelRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

func TestSeedDataInvariants(t *testing.T) {
	if len(tldSeeds) < 60 {
		t.Errorf("%d TLDs, want at least 60", len(tldSeeds))
	}
	byTLD := map[string]tldSeed{}
	for i, s := range tldSeeds {
		if i > 0 && tldSeeds[i-1].TLD >= s.TLD {
			t.Errorf("TLDs not sorted or not unique at %s", s.TLD)
		}
		byTLD[s.TLD] = s
		if s.Register <= 0 || s.Renew <= 0 {
			t.Errorf("%s: register and renew must be sold", s.TLD)
		}
		if s.Transfer < notSold || s.Restore < notSold {
			t.Errorf("%s: negative price", s.TLD)
		}
		if (s.Restore == notSold) != (s.RedemptionDays == 0) {
			t.Errorf("%s: restore is sold exactly when there is a redemption period", s.TLD)
		}
		if slices.Contains(s.Features, "RESTORE") != (s.Restore != notSold) {
			t.Errorf("%s: RESTORE feature must match the restore price", s.TLD)
		}
		for _, f := range s.Features {
			if !slices.Contains([]string{"CREATE", "RENEW", "TRANSFER", "UPDATE", "DELETE", "RESTORE", "PRIVACY_PROTECT"}, f) {
				t.Errorf("%s: feature %s is not one the spec names", s.TLD, f)
			}
		}
		if len(s.PeriodsMonths) == 0 || !slices.IsSorted(s.PeriodsMonths) || s.PeriodsMonths[0] < 1 || s.PeriodsMonths[len(s.PeriodsMonths)-1] > 120 {
			t.Errorf("%s: periods %v", s.TLD, s.PeriodsMonths)
		}
		if s.MinNS > s.MaxNS || s.MaxNS > 13 {
			t.Errorf("%s: nameservers %d..%d", s.TLD, s.MinNS, s.MaxNS)
		}
		if !slices.Contains([]string{"NO", "REGULAR", "CREATE_ONLY", "TRANSFER_FROM_REGISTRY"}, s.PremiumSupport) {
			t.Errorf("%s: premium support %q", s.TLD, s.PremiumSupport)
		}
		for _, c := range s.Countries {
			if len(c) != 2 || strings.ToUpper(c) != c {
				t.Errorf("%s: country %q", s.TLD, c)
			}
		}
	}
	seen := map[string]bool{}
	for _, l := range registeredLabels {
		if !labelRE.MatchString(l) || seen[l] {
			t.Errorf("registered label %q is invalid or repeated", l)
		}
		seen[l] = true
	}
	if len(seen)*len(registeredTLDs) < 3000 {
		t.Errorf("%d registered names, want a few thousand", len(seen)*len(registeredTLDs))
	}
	for _, tld := range registeredTLDs {
		if _, ok := byTLD[tld]; !ok {
			t.Errorf("registered TLD %s is not sold", tld)
		}
	}
	premium := map[string]bool{}
	for _, p := range premiumSeeds {
		label, tld, _ := strings.Cut(p.Name, ".")
		s, ok := byTLD[tld]
		switch {
		case !ok || !labelRE.MatchString(label) || premium[p.Name]:
			t.Errorf("premium name %s is invalid, repeated or not under a sold TLD", p.Name)
		case s.PremiumSupport == "NO":
			t.Errorf("premium name %s under %s, which has no premium names", p.Name, tld)
		case seen[label] && slices.Contains(registeredTLDs, tld):
			t.Errorf("premium name %s is also registered", p.Name)
		case slices.Contains(reservedLabels, label):
			t.Errorf("premium name %s is reserved", p.Name)
		case p.Cents <= s.Register:
			t.Errorf("premium name %s costs %d, not above the standard %d", p.Name, p.Cents, s.Register)
		}
		premium[p.Name] = true
	}
	if len(premium) < 100 {
		t.Errorf("%d premium names, want at least 100", len(premium))
	}
}
