package referral

import (
	"context"
	"fmt"
	"time"

	"github.com/domaind/domaind/models"
)

// Funnel is the referral funnel: counted clicks, checkouts the partner's
// links started, referred sales, their GMV after refunds, and the
// commission they earned after refunds (in Currency).
type Funnel struct {
	Clicks          int64 `json:"clicks"`
	Checkouts       int64 `json:"checkouts"`
	Sales           int64 `json:"sales"`
	GMVCents        int64 `json:"gmv_cents"`
	CommissionCents int64 `json:"commission_cents"`
}

// FunnelDay is one day's funnel.
type FunnelDay struct {
	Date Date `json:"date"`
	Funnel
}

// Rates are the funnel's conversions: checkouts per click, sales per
// checkout, sales per click (0 when nothing came before).
type Rates struct {
	ClickToCheckout float64 `json:"click_to_checkout"`
	CheckoutToSale  float64 `json:"checkout_to_sale"`
	ClickToSale     float64 `json:"click_to_sale"`
}

// Analytics is a window's referral funnel, in total and per day.
type Analytics struct {
	From       Date        `json:"from"`
	To         Date        `json:"to"`
	Currency   string      `json:"currency"`
	Totals     Funnel      `json:"totals"`
	Conversion Rates       `json:"conversion"`
	Days       []FunnelDay `json:"days"`
}

// Analytics returns the funnel of q's partner's links in its environment
// over its window. A day counts the checkouts opened and the sales made on
// it; a sale refunded in full counts no more, and GMV and commission are
// net of refunds.
func (s *Service) Analytics(ctx context.Context, q Query) (Analytics, error) {
	partnerID, env, w := q.PartnerID, q.Environment, q.Window
	clicks, err := s.clicksPerDay(ctx, q)
	if err != nil {
		return Analytics{}, err
	}
	db := s.db.WithContext(ctx)
	var opened []time.Time
	err = db.Table("checkout_sessions cs").Joins("JOIN referral_links k ON k.id = cs.referral_link_id").
		Where("k.partner_id = ? AND k.environment = ? AND cs.referral_at >= ? AND cs.referral_at < ?", partnerID, env, w.From, w.To).
		Pluck("cs.referral_at", &opened).Error
	if err != nil {
		return Analytics{}, fmt.Errorf("find referred checkouts: %w", err)
	}
	var sold []models.Order
	err = referredSales(db, partnerID, env).Where("o.created_at >= ? AND o.created_at < ?", w.From, w.To).
		Select("o.created_at, o.sale_price_cents, o.refunded_cents, o.referral_cents").Find(&sold).Error
	if err != nil {
		return Analytics{}, fmt.Errorf("find referred sales: %w", err)
	}
	days := map[time.Time]*FunnelDay{}
	out := Analytics{From: Date(w.From), To: Date(w.To.Add(-day)), Currency: Currency}
	for _, d := range w.days() {
		out.Days = append(out.Days, FunnelDay{Date: Date(d), Funnel: Funnel{Clicks: clicks[d]}})
	}
	for i := range out.Days {
		days[time.Time(out.Days[i].Date)] = &out.Days[i]
	}
	for _, t := range opened {
		days[t.UTC().Truncate(day)].Checkouts++
	}
	for _, o := range sold {
		d := days[o.CreatedAt.UTC().Truncate(day)]
		d.Sales++
		d.GMVCents += o.SalePriceCents - o.RefundedCents
		d.CommissionCents += earned(o)
	}
	t := &out.Totals
	for _, d := range out.Days {
		t.Clicks += d.Clicks
		t.Checkouts += d.Checkouts
		t.Sales += d.Sales
		t.GMVCents += d.GMVCents
		t.CommissionCents += d.CommissionCents
	}
	out.Conversion = Rates{ClickToCheckout: ratio(t.Checkouts, t.Clicks), CheckoutToSale: ratio(t.Sales, t.Checkouts),
		ClickToSale: ratio(t.Sales, t.Clicks)}
	return out, nil
}

// ratio is n/d to four places, 0 when d is.
func ratio(n, d int64) float64 {
	if d == 0 {
		return 0
	}
	return float64(n*10_000/d) / 10_000
}
