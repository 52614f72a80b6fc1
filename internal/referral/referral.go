// Package referral is the affiliate program (SPEC §4.2, scope refer): a
// partner that ops made an affiliate makes tracking links, each served at
// /r/{code}; a click on one is counted and sends the visitor on with an
// attribution cookie, and a sale on the hosted checkout by a visitor with
// the cookie earns the affiliate commission.
//
// The rules:
//
//   - A link is generic (to the home page), domain (to the marketplace's
//     search for a name) or product (to one listed name's page; the name
//     must be listed in the link's environment when the link is made).
//   - A click is counted once per visitor, link and hour. A visitor is a
//     keyed hash of the client address and user agent (the address is
//     never stored); clients whose user agent names a crawler, bot or
//     preview fetcher, or that send none, are redirected but not counted
//     and get no cookie.
//   - The cookie (CookieName) names the link and the click's time, signed,
//     and lives CookieTTL (30 days). A later click on another link
//     replaces it: the last click wins. Opening a checkout with the cookie
//     counts as a checkout the link started; paying it attributes the
//     order to the link (order.Referral).
//   - An attributed sale earns the link's partner its commission rate
//     (commission_bps, recorded on the order) of the sale, in the ledger
//     (internal/ledger): pending until the order settles, reversed in
//     proportion by refunds, payable from the settlement on and paid out
//     with the partner's other commission. A partner's own sale referred
//     by its own link counts as the link's sale but earns no referral
//     commission (the sale's commission is already the partner's). Only
//     sales in Currency are attributed, so that every referral figure is
//     in one currency.
//   - A partner that is no longer an affiliate keeps its links and
//     reports, but its links attribute nothing more.
package referral

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/inventory"
	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/internal/signedtoken"
	"github.com/domaind/domaind/models"
)

// Currency is the currency of the sales referrals are paid on.
const Currency = "USD"

// ClickPath is where links are served: ClickPath + code.
const ClickPath = "/r/"

// MaxLinks bounds the links of one partner in one environment.
const MaxLinks = 1000

// ErrNotAffiliate is the refusal of referral endpoints to a partner that
// is not an affiliate.
var ErrNotAffiliate = fault.New(fault.Forbidden,
	"this partner is not an affiliate: referral links and reports need the affiliate program (ask us to enable it)")

// Options are what the service is built from.
type Options struct {
	// BaseURL is the public address links and redirects are made of
	// (DOMAIND_BASE_URL, no trailing slash).
	BaseURL string
	// SecretKey (DOMAIND_SECRET_KEY) signs the attribution cookies, keys
	// the visitors' hashes and seals the reports' cursors.
	SecretKey []byte
}

// Service is the affiliate program of one database.
type Service struct {
	db        *gorm.DB
	inventory *inventory.Service
	opts      Options
	cookies   *signedtoken.Signer
	visitors  []byte // keys the visitors' hashes
	now       func() time.Time
}

// New returns the program of db, checking product links' names in inv.
func New(db *gorm.DB, inv *inventory.Service, opts Options, now func() time.Time) *Service {
	return &Service{db: db, inventory: inv, opts: opts, now: now,
		cookies:  signedtoken.New(opts.SecretKey, "referral cookies", "rf1."),
		visitors: derive(opts.SecretKey, "referral visitors")}
}

// RequireAffiliate returns ErrNotAffiliate unless partnerID is an
// affiliate.
func (s *Service) RequireAffiliate(ctx context.Context, partnerID string) error {
	var p models.Partner
	err := s.db.WithContext(ctx).Select("affiliate").Take(&p, "id = ?", partnerID).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return fmt.Errorf("find partner %s: %w", partnerID, err)
	}
	if !p.Affiliate {
		return ErrNotAffiliate
	}
	return nil
}

// NewLink is a partner's request for a link (POST /links).
type NewLink struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
}

// Link is a link as its partner sees it, with its figures.
type Link struct {
	ID        string    `json:"id"`
	Code      string    `json:"code"`
	URL       string    `json:"url"`
	Kind      string    `json:"kind"`
	Target    *string   `json:"target"`
	CreatedAt time.Time `json:"created_at"`
	// Clicks, Sales and CommissionCents are the link's counted clicks,
	// attributed sales, and the referral commission they earned after
	// refunds (in Currency).
	Clicks          int64 `json:"clicks"`
	Sales           int64 `json:"sales"`
	CommissionCents int64 `json:"commission_cents"`
}

// CreateLink makes a link of partnerID in env. The kind must be generic
// (no target), domain (target a domain name) or product (target a name
// listed in env); each is a validation error naming the field otherwise.
func (s *Service) CreateLink(ctx context.Context, partnerID, env string, n NewLink) (Link, error) {
	target, err := s.checkTarget(ctx, env, n)
	if err != nil {
		return Link{}, err
	}
	l := models.ReferralLink{ID: secret.NewID("lnk_"), PartnerID: partnerID, Environment: env, Code: newCode(),
		Kind: n.Kind, Target: target, CreatedAt: s.now().UTC()}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The partner's row lock serializes its new links, so the count
		// stays true until commit.
		if err := models.ForUpdate(tx).Select("id").Take(&models.Partner{}, "id = ?", partnerID).Error; err != nil {
			return fmt.Errorf("lock partner %s: %w", partnerID, err)
		}
		var n int64
		if err := tx.Model(&models.ReferralLink{}).Where("partner_id = ? AND environment = ?", partnerID, env).Count(&n).Error; err != nil {
			return fmt.Errorf("count links: %w", err)
		}
		if n >= MaxLinks {
			return fault.New(fault.Conflict, "this partner has %d links, the most there may be: reuse one", MaxLinks)
		}
		return tx.Create(&l).Error
	})
	if err != nil {
		return Link{}, err
	}
	return s.view(l), nil
}

// checkTarget returns n's target as stored, or why it is not one.
func (s *Service) checkTarget(ctx context.Context, env string, n NewLink) (string, error) {
	n.Target = strings.TrimSpace(n.Target)
	switch n.Kind {
	case models.LinkGeneric:
		if n.Target != "" {
			return "", fault.Invalid("target", "must be left out for a generic link (it goes to the home page)")
		}
		return "", nil
	case models.LinkDomain, models.LinkProduct:
	default:
		return "", fault.Invalid("kind", "must be generic, domain or product")
	}
	if n.Target == "" {
		return "", fault.Invalid("target", "is required for a %s link: a domain name such as example.com", n.Kind)
	}
	name, err := domainname.Parse(n.Target)
	if err != nil {
		return "", fault.InvalidErr("target", err)
	}
	if n.Kind == models.LinkDomain {
		return name.ASCII, nil
	}
	item, err := s.inventory.Find(ctx, env, name.ASCII)
	if e, ok := fault.As(err); ok && e.Code == fault.NotFound {
		return "", fault.Invalid("target", "%s is not listed in the marketplace: make a domain link to send visitors to its search", name.ASCII)
	}
	if err != nil {
		return "", err
	}
	return item.Domain, nil
}

// codeAlphabet makes link codes: lower-case letters and digits, without
// the ones read alike (0 o 1 l i).
const codeAlphabet = "23456789abcdefghjkmnpqrstuvwxyz"

// codeLen characters of codeAlphabet give about 54 bits: codes are public,
// but guessing another's is pointless and a clash is negligible (the
// unique index would refuse one).
const codeLen = 11

func newCode() string {
	b := make([]byte, codeLen)
	rand.Read(b) // never fails
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b)
}

// view is l as its partner sees it, without figures.
func (s *Service) view(l models.ReferralLink) Link {
	v := Link{ID: l.ID, Code: l.Code, URL: s.opts.BaseURL + ClickPath + l.Code, Kind: l.Kind, CreatedAt: l.CreatedAt.UTC()}
	if l.Target != "" {
		v.Target = &l.Target
	}
	return v
}

// Links returns partnerID's links in env, newest first, each with its
// figures.
func (s *Service) Links(ctx context.Context, partnerID, env string) ([]Link, error) {
	db := s.db.WithContext(ctx)
	var links []models.ReferralLink
	if err := db.Where("partner_id = ? AND environment = ?", partnerID, env).Order("created_at DESC, id DESC").Find(&links).Error; err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	type count struct {
		LinkID string
		N      int64
		Cents  int64
	}
	var clicks, sales, earned []count
	err := db.Model(&models.ReferralClick{}).Where("partner_id = ? AND environment = ?", partnerID, env).
		Select("link_id, COUNT(*) AS n").Group("link_id").Scan(&clicks).Error
	if err != nil {
		return nil, fmt.Errorf("count clicks: %w", err)
	}
	err = referredSales(db, partnerID, env).Select("o.referral_link_id AS link_id, COUNT(*) AS n").Group("o.referral_link_id").Scan(&sales).Error
	if err != nil {
		return nil, fmt.Errorf("count sales: %w", err)
	}
	err = earnings(db, partnerID, env).Select("o.referral_link_id AS link_id, SUM(l.amount_cents) AS cents").
		Group("o.referral_link_id").Scan(&earned).Error
	if err != nil {
		return nil, fmt.Errorf("sum commission: %w", err)
	}
	byLink := map[string]*Link{}
	out := make([]Link, len(links))
	for i, l := range links {
		out[i] = s.view(l)
		byLink[l.ID] = &out[i]
	}
	for _, c := range clicks {
		if v := byLink[c.LinkID]; v != nil {
			v.Clicks = c.N
		}
	}
	for _, c := range sales {
		if v := byLink[c.LinkID]; v != nil {
			v.Sales = c.N
		}
	}
	for _, c := range earned {
		if v := byLink[c.LinkID]; v != nil {
			v.CommissionCents = c.Cents
		}
	}
	return out, nil
}

// referredSales picks the orders o attributed to partnerID's links in env that
// stand as sales: neither refunded in full nor cancelled.
func referredSales(db *gorm.DB, partnerID, env string) *gorm.DB {
	return db.Table("orders o").Where("o.referral_partner_id = ? AND o.environment = ? AND o.status NOT IN ?",
		partnerID, env, []string{models.OrderRefunded, models.OrderCancelled})
}

// earnings picks the ledger lines l of partnerID's referral commission in
// env, joined to their orders o: accruals less reversals.
func earnings(db *gorm.DB, partnerID, env string) *gorm.DB {
	return db.Table("ledger_entries l").Joins("JOIN orders o ON o.public_id = l.order_id").
		Where("l.partner_id = ? AND l.environment = ? AND l.account = ?", partnerID, env, ledger.ReferralCommission)
}

// derive returns a key for purpose from the service's secret key.
func derive(secretKey []byte, purpose string) []byte {
	k := sha256.Sum256(append([]byte(purpose+"\x00"), secretKey...))
	return k[:]
}

// destination is where a click on l goes.
func (s *Service) destination(l models.ReferralLink) string {
	switch l.Kind {
	case models.LinkDomain:
		return s.opts.BaseURL + MarketPath + "?q=" + url.QueryEscape(l.Target)
	case models.LinkProduct:
		return s.opts.BaseURL + MarketPath + "/" + url.PathEscape(l.Target)
	}
	return s.opts.BaseURL + "/"
}

// MarketPath is the marketplace's pages: its search (?q=) and, under it,
// one listed name's page.
const MarketPath = "/market"
