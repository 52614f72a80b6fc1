package referral

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/pagecursor/pagecursortest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// An affiliate's referred sales in one environment walk page by page each
// once, newest first, among other affiliates' and the other
// environment's; and a page in the middle reads about its own rows.
func TestSalesPagesReadTheirOwnRows(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s := New(db, nil, Options{BaseURL: "https://domaind.test", SecretKey: []byte("test-secret-key-0123456789abcdef")}, func() time.Time { return now })
	start := now.AddDate(0, 0, -20)
	envs := []string{models.EnvLive, models.EnvSandbox}
	var orders []models.Order
	var want []string // the affiliate's live sales, newest first
	for i := range 12_000 {
		o := models.Order{PublicID: fmt.Sprintf("ord_%05d", i), PartnerID: "prt_seller", Environment: envs[i%2], ListingID: fmt.Sprintf("lst_%05d", i),
			Domain: fmt.Sprintf("sold%05d.com", i), Status: models.OrderSettled, Review: models.ReviewNone, SalePriceCents: 10_000, Currency: "USD",
			PaymentModel: models.PaymentHosted, BuyerEmail: "buyer@example.com", BuyerName: "B", BuyerCountry: "NL", ExternalPaymentRef: "ch",
			CreatedAt: start.Add(time.Duration(i/6) * 10 * time.Second), UpdatedAt: start}
		if i%6 < 2 { // a third of the sales are referred, by one of three affiliates
			affiliate, link := fmt.Sprintf("prt_aff_%d", i/6%3), fmt.Sprintf("lnk_%d", i/6%3)
			o.ReferralPartnerID, o.ReferralLinkID, o.ReferralBPS, o.ReferralCents = &affiliate, &link, 500, 500
			if affiliate == "prt_aff_0" && o.Environment == models.EnvLive {
				want = append([]string{o.PublicID}, want...)
			}
		}
		orders = append(orders, o)
	}
	if err := db.CreateInBatches(orders, 500).Error; err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q := Query{PartnerID: "prt_aff_0", Environment: models.EnvLive, Window: Window{From: start.Truncate(24 * time.Hour), To: now.AddDate(0, 0, 1).Truncate(24 * time.Hour)}, Limit: 25}
	// The page and the next one's first.
	pagecursortest.Check(t, db, "orders", pagecursortest.List[Sale]{
		Name: "an affiliate's live sales", Want: want, Read: 26, ID: func(sale Sale) string { return sale.OrderID },
		Page: func(cursor string) ([]Sale, string, error) {
			q := q
			q.Cursor = cursor
			page, err := s.Sales(ctx, q)
			if page.NextCursor == nil {
				return page.Sales, "", err
			}
			return page.Sales, *page.NextCursor, err
		}})
}
