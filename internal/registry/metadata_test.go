package registry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func loadInfo(t *testing.T, name string) TLDInfo {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	var info TLDInfo
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return info
}

func TestToMetadataFromRecordedAnswers(t *testing.T) {
	tests := []struct {
		fixture string
		want    Metadata
	}{
		{"tldinfo_com.json", Metadata{
			Provider:      "Verisign",
			PeriodsMonths: []int{12, 24, 36, 48, 60, 72, 84, 96, 108, 120}, MinPeriodMonths: 12, MaxPeriodMonths: 120,
			AllowedYears: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, MinYears: 1, MaxYears: 10,
			OrganizationRequired: false, OrganizationAllowed: true, AllowedCountries: []string{},
			MinNameservers: 0, MaxNameservers: 10, NameserversRequired: false,
			IDNSupport: true, PremiumSupport: "NO", TransferRequiresAuthcode: true,
			FeaturesAvailable: []string{"CREATE", "RENEW", "TRANSFER", "UPDATE", "DELETE", "RESTORE", "PRIVACY_PROTECT"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			got := loadInfo(t, tc.fixture).ToMetadata()
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("(-want +got)\n-%+v\n+%+v", tc.want, got)
			}
		})
	}
}

func TestToMetadataNL(t *testing.T) {
	got := loadInfo(t, "tldinfo_nl.json").ToMetadata()
	// .nl sells 3-month and 12-month periods: one whole year.
	if !reflect.DeepEqual(got.PeriodsMonths, []int{3, 12}) || got.MinPeriodMonths != 3 || got.MaxPeriodMonths != 12 {
		t.Errorf("periods = %v %d..%d", got.PeriodsMonths, got.MinPeriodMonths, got.MaxPeriodMonths)
	}
	if !reflect.DeepEqual(got.AllowedYears, []int{1}) || got.MinYears != 1 || got.MaxYears != 1 {
		t.Errorf("years = %v %d..%d", got.AllowedYears, got.MinYears, got.MaxYears)
	}
	if want := []string{"CREATE", "TRANSFER", "UPDATE", "DELETE", "RESTORE"}; !reflect.DeepEqual(got.FeaturesAvailable, want) {
		t.Errorf("features = %v, want %v (the spec's order; .nl renews automatically)", got.FeaturesAvailable, want)
	}
	if got.MinNameservers != 2 || got.MaxNameservers != 13 || got.NameserversRequired || got.IDNSupport || got.PremiumSupport != "NO" {
		t.Errorf("rules = %+v", got)
	}
}

func TestToMetadataOfAnEmptyAnswerHasNoNullLists(t *testing.T) {
	got := TLDInfo{}.ToMetadata()
	b, _ := json.Marshal(got)
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"periodsMonths", "allowedYears", "allowedCountries", "featuresAvailable"} {
		if _, ok := m[k].([]any); !ok {
			t.Errorf("%s = %v, want an array", k, m[k])
		}
	}
	if got.PremiumSupport != "NO" || got.MaxNameservers != 13 || !got.OrganizationAllowed {
		t.Errorf("defaults = %+v", got)
	}
}
