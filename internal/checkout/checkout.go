// Package checkout is the hosted checkout (SPEC §4.2, POST
// /checkout-session): a partner opens a session for one listed name, and
// the buyer pays on the service's page, whose link carries a signed token
// (pt) naming the session, its partner and its expiry. The card is charged
// through the environment's payment.Provider and the sale becomes the
// partner's order (order.RecordHosted), sold by the same rules as any
// order. A session pays for one order however often it is submitted.
package checkout

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/account"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/internal/referral"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/internal/signedtoken"
	"github.com/domaind/domaind/models"
)

// TTL is how long a checkout link works (SPEC §4.2).
const TTL = 7 * 24 * time.Hour

// PagePath is where the checkout page is served; its link adds ?pt=.
const PagePath = "/checkout"

// maxDeclines is how many refused payments a session takes; after them it
// takes no more (card testing).
const maxDeclines = 10

// Options are what the checkout is built from.
type Options struct {
	// BaseURL is where the page is served (DOMAIND_BASE_URL, no trailing
	// slash).
	BaseURL string
	// SecretKey (DOMAIND_SECRET_KEY) signs the links' tokens.
	SecretKey []byte
	// Providers charge the cards of each environment's sessions. An
	// environment without one opens no sessions.
	Providers map[string]payment.Provider
	// Referrals attributes the checkouts and sales of visitors who came
	// by an affiliate's link (nil: none are).
	Referrals *referral.Service
}

// Service is the hosted checkout of one database.
type Service struct {
	db     *gorm.DB
	orders *order.Service
	opts   Options
	links  *signedtoken.Signer
	now    func() time.Time
}

// New returns the checkout of db, selling through orders.
func New(db *gorm.DB, orders *order.Service, opts Options, now func() time.Time) *Service {
	return &Service{db: db, orders: orders, opts: opts, links: signedtoken.New(opts.SecretKey, "checkout tokens", tokenPrefix), now: now}
}

// NewSession is a partner's request for a checkout (POST
// /checkout-session).
type NewSession struct {
	Domain     string `json:"domain"`
	ReturnURL  string `json:"return_url"`
	CancelURL  string `json:"cancel_url"`
	BuyerEmail string `json:"buyer_email"`
}

// Session is a checkout as its partner sees it.
type Session struct {
	ID          string    `json:"id"`
	CheckoutURL string    `json:"checkout_url"`
	ExpiresAt   time.Time `json:"expires_at"`
}

// Create opens a checkout of env's listing of domain for partnerID: after
// checking the fields (validation errors naming them), that env has a
// payment provider (forbidden), and that the name is listed there (not
// found) and for sale at a buy-now price (conflict), it stores the session
// and returns its link, good for TTL.
func (s *Service) Create(ctx context.Context, partnerID, env string, n NewSession) (Session, error) {
	if strings.TrimSpace(n.Domain) == "" {
		return Session{}, fault.Invalid("domain", "is required")
	}
	for _, f := range []struct{ name, url string }{{"return_url", n.ReturnURL}, {"cancel_url", n.CancelURL}} {
		if !order.WebURL(f.url) {
			return Session{}, fault.Invalid(f.name, "must be an absolute http(s) URL of at most 2000 characters")
		}
	}
	if n.BuyerEmail != "" {
		email, err := account.NormaliseEmail(n.BuyerEmail)
		if err != nil {
			e, _ := fault.As(err)
			return Session{}, fault.Invalid("buyer_email", "%s", strings.TrimPrefix(e.Message, "email "))
		}
		n.BuyerEmail = email
	}
	if s.opts.Providers[env] == nil {
		return Session{}, fault.New(fault.Forbidden, "hosted checkout in %s takes payments through a payment provider, and this deployment has none configured for it: record the sales you collect with POST /orders", env)
	}
	offer, err := s.orders.Offer(ctx, partnerID, "", env, n.Domain)
	if err != nil {
		return Session{}, err
	}
	now := s.now().UTC()
	cs := models.CheckoutSession{ID: secret.NewID("cs_"), PartnerID: partnerID, Environment: env, ListingID: offer.ListingID,
		Domain: offer.Domain, ReturnURL: n.ReturnURL, CancelURL: n.CancelURL, BuyerEmail: n.BuyerEmail,
		ExpiresAt: now.Add(TTL).Truncate(time.Second), CreatedAt: now}
	if err := s.db.WithContext(ctx).Create(&cs).Error; err != nil {
		return Session{}, fmt.Errorf("store checkout session of %s: %w", cs.Domain, err)
	}
	link := s.opts.BaseURL + PagePath + "?" + url.Values{"pt": {s.token(cs)}}.Encode()
	return Session{ID: cs.ID, CheckoutURL: link, ExpiresAt: cs.ExpiresAt}, nil
}

// session returns the session a link's token names: a bad request when
// the token is malformed or not ours, checkout_expired past its expiry,
// not_found when there is no such session.
func (s *Service) session(ctx context.Context, token string) (models.CheckoutSession, error) {
	var cs models.CheckoutSession
	c, err := s.parseToken(token)
	if err != nil {
		return cs, fault.New(fault.BadRequest, "This checkout link is not valid: it is incomplete or was changed. Ask the seller for a new one.")
	}
	if !c.ExpiresAt.After(s.now()) {
		return cs, fault.New(fault.CheckoutExpired, "This checkout link expired on %s. Ask the seller for a new one.", c.ExpiresAt.UTC().Format("2 January 2006 at 15:04 UTC"))
	}
	err = s.db.WithContext(ctx).Take(&cs, "id = ? AND partner_id = ?", c.SessionID, c.PartnerID).Error
	return cs, models.FoundOr(err, "checkout session "+c.SessionID, "This checkout is not known here. Ask the seller for a new link.")
}

// doneURL is where a paid session sends the buyer: its return_url with
// session_id and order_id added to the query.
func doneURL(cs models.CheckoutSession) string {
	u, err := url.Parse(cs.ReturnURL)
	if err != nil || cs.OrderID == nil { // checked when the session was made, and paid
		return cs.ReturnURL
	}
	q := u.Query()
	q.Set("session_id", cs.ID)
	q.Set("order_id", *cs.OrderID)
	u.RawQuery = q.Encode()
	return u.String()
}
