package referral

import (
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/models"
)

func TestMaskEmail(t *testing.T) {
	for in, want := range map[string]string{
		"jane@example.com":      "j***@e***.com",
		"a@b.co.uk":             "a***@b***.uk",
		"ada@localhost":         "a***@l***",
		"not-an-address":        "***",
		"@example.com":          "***",
		"jane@":                 "***",
		"J.Doe+shop@Mail.Co.Nz": "J***@M***.Nz",
	} {
		if got := MaskEmail(in); got != want {
			t.Errorf("MaskEmail(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewWindow(t *testing.T) {
	now := time.Date(2026, 11, 25, 15, 30, 0, 0, time.UTC)
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }
	at := func(t time.Time) *time.Time { return &t }
	for _, tc := range []struct {
		name     string
		from, to *time.Time
		want     Window
	}{
		{"defaults: the 30 days up to today", nil, nil, Window{day(26).AddDate(0, 0, -30), day(26)}},
		{"a time as the end counts its day whole", nil, at(day(20).Add(time.Hour)), Window{day(21).AddDate(0, 0, -30), day(21)}},
		{"midnight as the end is that day's start", at(day(1)), at(day(20)), Window{day(1), day(20)}},
		{"a time as the start is cut to its day", at(day(3).Add(23 * time.Hour)), nil, Window{day(3), day(26)}},
	} {
		got, err := NewWindow(tc.from, tc.to, now)
		if err != nil || got != tc.want {
			t.Errorf("%s: NewWindow = %v %v, %v; want %v %v", tc.name, got.From, got.To, err, tc.want.From, tc.want.To)
		}
	}
	for _, tc := range []struct {
		from, to time.Time
		field    string
	}{
		{day(20), day(10), "from"},
		{day(20), day(20), "from"},
		{day(1).AddDate(-2, 0, 0), day(1), "from"},
	} {
		_, err := NewWindow(&tc.from, &tc.to, now)
		if e, ok := fault.As(err); !ok || e.Field != tc.field {
			t.Errorf("NewWindow(%v, %v) = %v, want a validation error naming %s", tc.from, tc.to, err, tc.field)
		}
	}
}

func TestIsBot(t *testing.T) {
	for ua, bot := range map[string]bool{
		"":           true,
		"   ":        true,
		"curl/8.5.0": true,
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)":                                                                true,
		"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)":                                                               true,
		"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)":                                                                              true,
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36":                                   false,
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1": false,
	} {
		if got := IsBot(ua); got != bot {
			t.Errorf("IsBot(%q) = %t, want %t", ua, got, bot)
		}
	}
}

// Every commission line reads as the partner sees it: owed to it is
// positive, and a settled referral's pending line is left out for its
// payable one.
func TestLineType(t *testing.T) {
	refund := "rfd_1"
	for _, tc := range []struct {
		e      models.LedgerEntry
		typ    string
		amount int64
	}{
		{models.LedgerEntry{Account: ledger.Payable, Kind: ledger.KindSale, AmountCents: -300}, LineAccrued, 300},
		{models.LedgerEntry{Account: ledger.Payable, Kind: ledger.KindBrokerage, AmountCents: -225}, LineAccrued, 225},
		{models.LedgerEntry{Account: ledger.Payable, Kind: ledger.KindReferral, AmountCents: -1_200}, LineAccrued, 1_200},
		{models.LedgerEntry{Account: ledger.Payable, Kind: ledger.KindRefund, AmountCents: 120, RefundID: &refund}, LineReversed, -120},
		{models.LedgerEntry{Account: ledger.Payable, Kind: ledger.KindPayout, AmountCents: 1_500}, LinePaidOut, -1_500},
		{models.LedgerEntry{Account: ledger.ReferralPending, Kind: ledger.KindReferral, AmountCents: -1_200}, LinePending, 1_200},
		{models.LedgerEntry{Account: ledger.ReferralPending, Kind: ledger.KindReferral, AmountCents: 400, RefundID: &refund}, LineReversed, -400},
		{models.LedgerEntry{Account: ledger.ReferralPending, Kind: ledger.KindReferral, AmountCents: 800}, "", 0},
	} {
		if typ, amount := lineType(tc.e); typ != tc.typ || amount != tc.amount {
			t.Errorf("lineType(%s %s %d) = %q %d, want %q %d", tc.e.Account, tc.e.Kind, tc.e.AmountCents, typ, amount, tc.typ, tc.amount)
		}
	}
}
