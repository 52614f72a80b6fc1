package payment

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fault"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestParseCard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, number, expiry, cvc, holder string
		field                             string // "" when the card is good
	}{
		{"test card with spaces", "4242 4242 4242 4242", "12/30", "123", "Ada Buyer", ""},
		{"dashes and a four-digit year", "4000-0000-0000-0002", "11/2026", "1234", "Ada", ""},
		{"this month still counts", "4242424242424242", "11/26", "123", "Ada", ""},
		{"Luhn fails", "4242 4242 4242 4241", "12/30", "123", "Ada", "card_number"},
		{"too short", "4242 4242", "12/30", "123", "Ada", "card_number"},
		{"letters", "4242 4242 4242 424x", "12/30", "123", "Ada", "card_number"},
		{"empty", "", "12/30", "123", "Ada", "card_number"},
		{"expired last month", "4242424242424242", "10/26", "123", "Ada", "expiry"},
		{"month 13", "4242424242424242", "13/30", "123", "Ada", "expiry"},
		{"no slash", "4242424242424242", "1230", "123", "Ada", "expiry"},
		{"short CVC", "4242424242424242", "12/30", "12", "Ada", "cvc"},
		{"CVC with a letter", "4242424242424242", "12/30", "12a", "Ada", "cvc"},
		{"no name", "4242424242424242", "12/30", "123", "  ", "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseCard(tt.number, tt.expiry, tt.cvc, tt.holder, now)
			if tt.field == "" {
				if err != nil || len(c.Number) != 16 || c.ExpYear < 2026 || c.ExpMonth < 1 {
					t.Errorf("ParseCard = %v %d/%d, %v; want a good card", c, c.ExpMonth, c.ExpYear, err)
				}
				return
			}
			e, ok := fault.As(err)
			if !ok || e.Code != fault.Validation || e.Field != tt.field || e.Message == "" {
				t.Errorf("ParseCard = %v, want a validation error of %s", err, tt.field)
			}
		})
	}
}

// A card never prints its number, however it is printed or logged.
func TestCardPrintsOnlyItsLastFour(t *testing.T) {
	t.Parallel()
	c, err := ParseCard("4242 4242 4242 4242", "12/30", "987", "Ada", now)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	noTime := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	slog.New(slog.NewTextHandler(&log, noTime)).Info("charge", "card", c)
	slog.New(slog.NewJSONHandler(&log, noTime)).Info("charge", "card", c)
	for _, out := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c), fmt.Sprint(Charge{Card: c}), fmt.Sprintf("%+v", Charge{Card: c}), log.String()} {
		if strings.Contains(out, "42424242") || strings.Contains(out, "987") {
			t.Errorf("printed %q: the number or the CVC shows", out)
		}
		if !strings.Contains(out, "card ending 4242") {
			t.Errorf("printed %q, want the last four digits", out)
		}
	}
	if c.Last4() != "4242" {
		t.Errorf("Last4 = %q", c.Last4())
	}
}
