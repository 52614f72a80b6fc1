package referral

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/x-way/crawlerdetect"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/models"
)

// CookieName is the attribution cookie's name.
const CookieName = "domaind_ref"

// CookieTTL is how long a click attributes sales (SPEC: 30 days).
const CookieTTL = 30 * 24 * time.Hour

// Visit is a click on a link as the server received it.
type Visit struct {
	Code      string
	Address   string // the client's address
	UserAgent string
}

// Landing is where a click sends the visitor, and the attribution cookie
// to set ("" for a client not counted, which gets none).
type Landing struct {
	URL    string
	Cookie string
}

// cookieClaims are what the attribution cookie carries: the link and
// when it was clicked (Unix seconds).
type cookieClaims struct {
	Link string `json:"l"`
	At   int64  `json:"t"`
}

// linkTerms is a link with what attributing a sale to it needs to know of
// its partner.
type linkTerms struct {
	models.ReferralLink
	Affiliate     bool
	CommissionBPS int
}

// findLink returns the link q picks, with its partner's terms.
func findLink(db *gorm.DB, where string, arg any) (linkTerms, error) {
	var l linkTerms
	err := db.Table("referral_links k").Joins("JOIN partners p ON p.id = k.partner_id").
		Select("k.*, p.affiliate, p.commission_bps").Where(where, arg).Take(&l).Error
	return l, err
}

// Click counts a click on the link of v.Code, once per visitor and hour,
// and returns where it goes with the attribution cookie. An unknown code
// is not_found. A crawler, or a link of a partner that is no longer an
// affiliate, is sent on without being counted or given a cookie.
func (s *Service) Click(ctx context.Context, v Visit) (Landing, error) {
	if v.Code == "" || len(v.Code) > codeLen || strings.Trim(v.Code, codeAlphabet) != "" {
		return Landing{}, errNoLink
	}
	db := s.db.WithContext(ctx)
	l, err := findLink(db, "k.code = ?", v.Code)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Landing{}, errNoLink
	}
	if err != nil {
		return Landing{}, fmt.Errorf("find link %s: %w", v.Code, err)
	}
	out := Landing{URL: s.destination(l.ReferralLink)}
	if !l.Affiliate || IsBot(v.UserAgent) {
		return out, nil
	}
	now := s.now().UTC()
	click := models.ReferralClick{LinkID: l.ID, Visitor: s.visitor(v), Hour: now.Truncate(time.Hour), PartnerID: l.PartnerID,
		Environment: l.Environment, Day: now.Truncate(24 * time.Hour), CreatedAt: now}
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&click).Error; err != nil {
		return Landing{}, fmt.Errorf("count a click of %s: %w", l.ID, err)
	}
	if out.Cookie, err = s.cookies.Sign(cookieClaims{Link: l.ID, At: now.Unix()}); err != nil {
		return Landing{}, err
	}
	return out, nil
}

var errNoLink = fault.New(fault.NotFound, "there is no referral link of this code")

// visitor is v's visitor: a keyed hash of its address (the API's client
// identity: an IPv6 client's /64). The user agent is the client's to
// choose, so it does not make another visitor.
func (s *Service) visitor(v Visit) string {
	m := hmac.New(sha256.New, s.visitors)
	m.Write([]byte(v.Address))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// IsBot reports whether a user agent is not a person's browser: empty, or
// naming a crawler, bot, monitor or link-preview fetcher.
func IsBot(userAgent string) bool {
	return strings.TrimSpace(userAgent) == "" || crawlerdetect.IsCrawler(userAgent)
}

// attributed returns the link the attribution cookie names, when the
// cookie is ours, younger than CookieTTL, and of a link in env whose
// partner is still an affiliate; ok is false otherwise.
func (s *Service) attributed(ctx context.Context, cookie, env string) (l linkTerms, ok bool, err error) {
	var c cookieClaims
	if cookie == "" || s.cookies.Open(cookie, &c) != nil || s.now().Sub(time.Unix(c.At, 0)) > CookieTTL {
		return l, false, nil
	}
	l, err = findLink(s.db.WithContext(ctx), "k.id = ?", c.Link)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return l, false, nil
	}
	if err != nil {
		return l, false, fmt.Errorf("find link %s: %w", c.Link, err)
	}
	return l, l.Affiliate && l.Environment == env, nil
}

// CheckoutOpened records that the visitor carrying cookie opened the
// checkout of cs: a checkout its link started (the latest link wins, as
// for the sale). A paid checkout, or one its link has already, is left
// as it is, without a write.
func (s *Service) CheckoutOpened(ctx context.Context, cookie string, cs models.CheckoutSession) error {
	if cs.OrderID != nil {
		return nil
	}
	l, ok, err := s.attributed(ctx, cookie, cs.Environment)
	if err != nil || !ok || (cs.ReferralLinkID != nil && *cs.ReferralLinkID == l.ID) {
		return err
	}
	err = s.db.WithContext(ctx).Model(&models.CheckoutSession{}).
		Where("id = ? AND order_id IS NULL AND (referral_link_id IS NULL OR referral_link_id <> ?)", cs.ID, l.ID).
		Updates(map[string]any{"referral_link_id": l.ID, "referral_at": s.now().UTC()}).Error
	if err != nil {
		return fmt.Errorf("record the referral of checkout session %s: %w", cs.ID, err)
	}
	return nil
}

// Referral returns the referral of a sale of cs in currency by the
// visitor carrying cookie, or nil when it is not referred. The link's
// partner earns its commission rate, unless it is the seller.
func (s *Service) Referral(ctx context.Context, cookie string, cs models.CheckoutSession, currency string) (*order.Referral, error) {
	l, ok, err := s.attributed(ctx, cookie, cs.Environment)
	if err != nil || !ok || currency != Currency {
		return nil, err
	}
	r := &order.Referral{LinkID: l.ID, PartnerID: l.PartnerID, BPS: l.CommissionBPS}
	if l.PartnerID == cs.PartnerID {
		r.BPS = 0
	}
	return r, nil
}
