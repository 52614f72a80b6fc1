package referral

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/models"
)

const day = 24 * time.Hour

// Windows of the per-day reports: DefaultDays up to today when no dates
// are given, at most MaxDays.
const (
	DefaultDays = 30
	MaxDays     = 366
)

// Query is what a report is asked for: whose figures, over which window,
// and for the paged reports the page (Limit, and Cursor: the
// next_cursor of the page before).
type Query struct {
	PartnerID, Environment string
	Window                 Window
	Limit                  int
	Cursor                 string
}

// Window is a span of whole UTC days, From up to (not including) To.
type Window struct {
	From, To time.Time
}

// NewWindow returns the window from from to to, either of which may be
// nil: to defaults to the end of today, from to DefaultDays before to.
// Both are cut to whole UTC days (to rounded up). A window that ends
// before it starts, or is longer than MaxDays, is a validation error.
func NewWindow(from, to *time.Time, now time.Time) (Window, error) {
	w := Window{To: now.UTC().Truncate(day).Add(day)}
	if to != nil {
		w.To = ceilDay(*to)
	}
	w.From = w.To.Add(-DefaultDays * day)
	if from != nil {
		w.From = from.UTC().Truncate(day)
	}
	switch {
	case !w.From.Before(w.To):
		return w, fault.Invalid("from", "must be before to")
	case w.To.Sub(w.From) > MaxDays*day:
		return w, fault.Invalid("from", "is more than %d days before to: ask for a shorter span", MaxDays)
	}
	return w, nil
}

func ceilDay(t time.Time) time.Time {
	d := t.UTC().Truncate(day)
	if d.Before(t) {
		d = d.Add(day)
	}
	return d
}

// days returns the days of w, in order.
func (w Window) days() []time.Time {
	var out []time.Time
	for d := w.From; d.Before(w.To); d = d.Add(day) {
		out = append(out, d)
	}
	return out
}

// Date is a UTC day as the reports write it (2026-11-25).
type Date time.Time

// MarshalJSON writes d as a date.
func (d Date) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(d).UTC().Format(time.DateOnly) + `"`), nil
}

// UnmarshalJSON reads a date d.MarshalJSON wrote.
func (d *Date) UnmarshalJSON(b []byte) error {
	t, err := time.Parse(`"`+time.DateOnly+`"`, string(b))
	*d = Date(t)
	return err
}

// ClickDay is one day's counted clicks.
type ClickDay struct {
	Date   Date  `json:"date"`
	Clicks int64 `json:"clicks"`
}

// ClickReport is a window's counted clicks, in total and per day (every
// day of the window, zero included).
type ClickReport struct {
	From   Date       `json:"from"`
	To     Date       `json:"to"`
	Clicks int64      `json:"clicks"`
	Days   []ClickDay `json:"days"`
}

// Clicks returns the counted clicks of q's partner's links in its
// environment over its window.
func (s *Service) Clicks(ctx context.Context, q Query) (ClickReport, error) {
	w := q.Window
	perDay, err := s.clicksPerDay(ctx, q)
	if err != nil {
		return ClickReport{}, err
	}
	out := ClickReport{From: Date(w.From), To: Date(w.To.Add(-day))}
	for _, d := range w.days() {
		n := perDay[d]
		out.Clicks += n
		out.Days = append(out.Days, ClickDay{Date: Date(d), Clicks: n})
	}
	return out, nil
}

func (s *Service) clicksPerDay(ctx context.Context, q Query) (map[time.Time]int64, error) {
	var rows []struct {
		Day time.Time
		N   int64
	}
	err := models.FromReplica(s.db.WithContext(ctx)).Model(&models.ReferralClick{}).
		Where("partner_id = ? AND environment = ? AND day >= ? AND day < ?", q.PartnerID, q.Environment, q.Window.From, q.Window.To).
		Select("day, COUNT(*) AS n").Group("day").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("count clicks: %w", err)
	}
	out := make(map[time.Time]int64, len(rows))
	for _, r := range rows {
		out[r.Day.UTC()] += r.N
	}
	return out, nil
}

// Commission states of a referred sale: pending until the order settles,
// payable after, reversed when the sale is refunded in full or cancelled.
const (
	StatePending  = "pending"
	StatePayable  = "payable"
	StateReversed = "reversed"
)

// Sale is a sale attributed to one of the partner's links, as the
// affiliate sees it: the buyer's email masked.
type Sale struct {
	OrderID         string    `json:"order_id"`
	LinkID          string    `json:"link_id"`
	Domain          string    `json:"domain"`
	BuyerEmail      string    `json:"buyer_email"`
	AmountCents     int64     `json:"amount_cents"`
	RefundedCents   int64     `json:"refunded_cents"`
	Currency        string    `json:"currency"`
	CommissionBPS   int       `json:"commission_bps"`
	CommissionCents int64     `json:"commission_cents"`
	CommissionState string    `json:"commission_state"`
	CreatedAt       time.Time `json:"created_at"`
}

// SalePage is a page of referred sales.
type SalePage struct {
	Sales      []Sale  `json:"sales"`
	NextCursor *string `json:"next_cursor"`
}

// salePages pages the referred sales.
var salePages = pagecursor.Newest[models.Order]{Name: "referral-sales/v1", KeyCol: "created_at", IDCol: "public_id",
	Key: func(o models.Order) (time.Time, string) { return o.CreatedAt, o.PublicID }}

// Sales returns a page of the sales attributed to q's partner's links in
// its environment over its window, newest first.
func (s *Service) Sales(ctx context.Context, q Query) (SalePage, error) {
	w := q.Window
	db := models.FromReplica(s.db.WithContext(ctx)).Model(&models.Order{}).Where("referral_partner_id = ? AND environment = ? AND created_at >= ? AND created_at < ?",
		q.PartnerID, q.Environment, w.From, w.To)
	orders, next, err := salePages.Page(db, s.opts.SecretKey, q.Cursor, q.Limit, q.PartnerID, q.Environment, w.From.String(), w.To.String())
	if err != nil {
		return SalePage{}, err
	}
	out := SalePage{Sales: make([]Sale, len(orders)), NextCursor: nullable(next)}
	for i, o := range orders {
		out.Sales[i] = Sale{OrderID: o.PublicID, LinkID: deref(o.ReferralLinkID), Domain: o.Domain, BuyerEmail: MaskEmail(o.BuyerEmail),
			AmountCents: o.SalePriceCents, RefundedCents: o.RefundedCents, Currency: o.Currency, CommissionBPS: o.ReferralBPS,
			CommissionCents: earned(o), CommissionState: state(o), CreatedAt: o.CreatedAt.UTC()}
	}
	return out, nil
}

// nullable is s, nil for "" (a page's next_cursor after the last page).
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// earned is the referral commission o earned after its refunds: what its
// ledger lines leave (ledger.ReferralRefund reverses it in proportion).
func earned(o models.Order) int64 {
	return ledger.Kept(o.SalePriceCents, o.ReferralCents, o.RefundedCents)
}

func state(o models.Order) string {
	switch o.Status {
	case models.OrderSettled:
		return StatePayable
	case models.OrderRefunded, models.OrderCancelled:
		return StateReversed
	}
	return StatePending
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// MaskEmail hides most of an address: the first character of its local
// part and of its domain stay, and the domain's last label
// (jane@example.com → j***@e***.com).
func MaskEmail(email string) string {
	local, domain, ok := strings.Cut(email, "@")
	if !ok || local == "" || domain == "" {
		return "***"
	}
	masked := local[:1] + "***@" + domain[:1] + "***"
	if i := strings.LastIndexByte(domain, '.'); i > 0 {
		masked += domain[i:]
	}
	return masked
}

// Types of commission lines.
const (
	LineAccrued  = "accrued"
	LinePending  = "pending"
	LinePaidOut  = "paid_out"
	LineReversed = "reversed"
)

// CommissionLine is one change of what the service owes the partner in
// commission: accrued (now payable: a hosted sale's commission, a
// brokered deal's, a referred sale's once settled), pending (a referred
// sale's, until it settles), reversed (by a refund), or paid_out. Balance
// is what is payable after the line (pending commission is not, yet).
type CommissionLine struct {
	ID           int64     `json:"id"`
	Type         string    `json:"type"`
	AmountCents  int64     `json:"amount_cents"`
	BalanceCents int64     `json:"balance_cents"`
	Currency     string    `json:"currency"`
	OrderID      *string   `json:"order_id"`
	CaseID       *string   `json:"case_id"`
	PayoutID     *string   `json:"payout_id"`
	At           time.Time `json:"at"`
}

// CommissionTotals adds up a window's commission lines of each type (as
// amounts: reversed and paid out are not negative here, as they are on
// the lines), and what is payable and pending at its end.
type CommissionTotals struct {
	Currency      string `json:"currency"`
	AccruedCents  int64  `json:"accrued_cents"`
	PendingCents  int64  `json:"pending_cents"`
	ReversedCents int64  `json:"reversed_cents"`
	PaidOutCents  int64  `json:"paid_out_cents"`
	// BalanceCents is payable and OutstandingPendingCents still pending
	// at the end of the window.
	BalanceCents            int64 `json:"balance_cents"`
	OutstandingPendingCents int64 `json:"outstanding_pending_cents"`
}

// commissionAccounts are the accounts of what the service owes partners.
var commissionAccounts = []string{ledger.Payable, ledger.ReferralPending}

// CommissionPage is a page of commission lines, with the totals of the
// whole window.
type CommissionPage struct {
	Commissions []CommissionLine   `json:"commissions"`
	NextCursor  *string            `json:"next_cursor"`
	Totals      []CommissionTotals `json:"totals"`
}

// Commissions returns a page of q's partner's commission lines in its
// environment over its window, oldest first, each with the balance after
// it, and the window's totals. A referred sale's settlement moves its
// commission from pending to payable in two lines; the pending one is not
// shown (the accrued one is).
func (s *Service) Commissions(ctx context.Context, q Query) (CommissionPage, error) {
	limit, err := pagecursor.Limit(q.Limit, pagecursor.DefaultLimit, pagecursor.MaxLimit)
	if err != nil {
		return CommissionPage{}, err
	}
	w := q.Window
	db := models.FromReplica(s.db.WithContext(ctx))
	lines := func() *gorm.DB {
		return db.Model(&models.LedgerEntry{}).Where("partner_id = ? AND environment = ? AND account IN ?", q.PartnerID, q.Environment, commissionAccounts)
	}
	fingerprint := pagecursor.Fingerprint("commissions/v1", q.PartnerID, q.Environment, w.From.String(), w.To.String())
	after := int64(0)
	if q.Cursor != "" {
		c, err := pagecursor.Decode(s.opts.SecretKey, q.Cursor, fingerprint)
		if err != nil {
			return CommissionPage{}, err
		}
		after = c.Key
	}
	var page []models.LedgerEntry
	err = lines().Where("created_at >= ? AND created_at < ? AND id > ?", w.From, w.To, after).Order("id").Limit(limit + 1).Find(&page).Error
	if err != nil {
		return CommissionPage{}, fmt.Errorf("list commission lines: %w", err)
	}
	page, next := pagecursor.Trim(s.opts.SecretKey, fingerprint, page, limit, func(e models.LedgerEntry) (int64, string) {
		return e.ID, strconv.FormatInt(e.ID, 10) // a cursor needs an id, as Decode checks
	})
	// The balance before the page's first line, per currency.
	balance := map[string]int64{}
	if len(page) > 0 {
		if balance, err = payableBefore(lines(), page[0].ID); err != nil {
			return CommissionPage{}, err
		}
	}
	out := CommissionPage{Commissions: []CommissionLine{}, NextCursor: nullable(next)}
	for _, e := range page {
		typ, amount := lineType(e)
		if typ == "" {
			continue
		}
		if e.Account == ledger.Payable {
			balance[e.Currency] -= e.AmountCents
		}
		out.Commissions = append(out.Commissions, CommissionLine{ID: e.ID, Type: typ, AmountCents: amount, BalanceCents: balance[e.Currency],
			Currency: e.Currency, OrderID: e.OrderID, CaseID: e.CaseID, PayoutID: e.PayoutID, At: e.CreatedAt.UTC()})
	}
	if out.Totals, err = commissionTotals(lines(), w); err != nil {
		return CommissionPage{}, err
	}
	return out, nil
}

// lineType is the type of a commission line e, and its amount as the
// partner sees it (owed to it: positive); "" for a line not shown.
func lineType(e models.LedgerEntry) (string, int64) {
	owed := -e.AmountCents
	switch {
	case e.Account == ledger.ReferralPending && owed > 0:
		return LinePending, owed
	case e.Account == ledger.ReferralPending && e.RefundID != nil:
		return LineReversed, owed
	case e.Account == ledger.ReferralPending: // settled: the payable line shows it
		return "", 0
	case e.Kind == ledger.KindPayout:
		return LinePaidOut, owed
	case owed < 0:
		return LineReversed, owed
	}
	return LineAccrued, owed
}

// payableBefore sums, per currency, the payable lines q picks before id:
// the balance a page starts from.
func payableBefore(q *gorm.DB, id int64) (map[string]int64, error) {
	var rows []struct {
		Currency string
		Owed     int64
	}
	err := q.Where("account = ? AND id < ?", ledger.Payable, id).Select("currency, -SUM(amount_cents) AS owed").Group("currency").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("sum the balance: %w", err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Currency] = r.Owed
	}
	return out, nil
}

// commissionTotals adds up the lines q picks in w, per currency, and the
// balances at w's end.
func commissionTotals(q *gorm.DB, w Window) ([]CommissionTotals, error) {
	rows := []CommissionTotals{}
	err := q.Where("created_at < ?", w.To).Select(`currency,
		COALESCE(SUM(CASE WHEN created_at >= ? AND account = ? AND kind <> ? AND amount_cents < 0 THEN -amount_cents END), 0) AS accrued_cents,
		COALESCE(SUM(CASE WHEN created_at >= ? AND account = ? AND amount_cents < 0 THEN -amount_cents END), 0) AS pending_cents,
		COALESCE(SUM(CASE WHEN created_at >= ? AND refund_id IS NOT NULL THEN amount_cents END), 0) AS reversed_cents,
		COALESCE(SUM(CASE WHEN created_at >= ? AND kind = ? THEN amount_cents END), 0) AS paid_out_cents,
		COALESCE(SUM(CASE WHEN account = ? THEN -amount_cents END), 0) AS balance_cents,
		COALESCE(SUM(CASE WHEN account = ? THEN -amount_cents END), 0) AS outstanding_pending_cents`,
		w.From, ledger.Payable, ledger.KindPayout, w.From, ledger.ReferralPending, w.From, w.From, ledger.KindPayout,
		ledger.Payable, ledger.ReferralPending).Group("currency").Order("currency").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("sum commission lines: %w", err)
	}
	return rows, nil
}
