package api

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/checkout"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ratelimit"
)

// checkoutPayLimit bounds the payments tried from one address: a payment
// form is where stolen card numbers get tested.
var checkoutPayLimit = ratelimit.PerMinute("checkout-pay", 20)

// checkoutPage is what the checkout page shows: the session, and the form
// as the buyer sent it but the card's number and code, never sent back.
type checkoutPage struct {
	checkout.Page
	Title, Price, CSRF, Error    string
	Name, Email, Country, Expiry string
	// Confirming: the buyer is back from the processor's page, which took
	// the payment, before its notice made the order.
	Confirming bool
}

// checkoutForm answers GET /checkout?pt=: the hosted checkout's page, or,
// once it is paid, on to the partner's return_url with the order.
func (s *Server) checkoutForm(c *gin.Context) {
	p, err := s.svc.Checkout.Open(c.Request.Context(), c.Query("pt"), s.referralCookie(c))
	switch {
	case err != nil:
		s.checkoutError(c, err)
	case p.DoneURL != "":
		c.Redirect(http.StatusSeeOther, p.DoneURL)
	default:
		view := checkoutPage{Page: p, Email: p.BuyerEmail, Confirming: p.Pending && c.Query(checkout.PaidParam) == "1"}
		if view.Confirming {
			c.Header("Refresh", "2") // until the processor's notice makes the order, which sends the buyer on
		}
		s.renderCheckout(c, nil, view)
	}
}

// checkoutSubmit answers the checkout page's form: on to the partner's
// return_url once paid (or paid already), else the page again with what
// went wrong.
func (s *Server) checkoutSubmit(c *gin.Context) {
	ctx := c.Request.Context()
	pay := checkout.Payment{Token: c.PostForm("pt"), Currency: c.PostForm("currency"),
		CardNumber: c.PostForm("card_number"), Expiry: c.PostForm("expiry"), CVC: c.PostForm("cvc"),
		Name: c.PostForm("name"), Email: c.PostForm("email"), Country: c.PostForm("country"), Referral: s.referralCookie(c)}
	pay.PriceCents, _ = strconv.ParseInt(c.PostForm("price_cents"), 10, 64) // a bad one is the page's price_mismatch
	var err error
	if s.validFormCSRF(c) {
		var to string
		if to, err = s.svc.Checkout.Pay(ctx, pay); err == nil {
			c.Redirect(http.StatusSeeOther, to)
			return
		}
	} else {
		err = &fault.Error{Code: fault.CSRFFailed, Message: "The form expired. Please try again."}
	}
	p, oerr := s.svc.Checkout.Open(ctx, pay.Token, pay.Referral)
	switch {
	case oerr != nil:
		s.checkoutError(c, oerr)
	case p.DoneURL != "":
		c.Redirect(http.StatusSeeOther, p.DoneURL)
	default:
		s.renderCheckout(c, err, checkoutPage{Page: p, Name: pay.Name, Email: pay.Email, Country: pay.Country, Expiry: pay.Expiry})
	}
}

// renderCheckout shows the checkout page with err (nil, or what went wrong
// with the payment) or else why the session is closed, with the status of
// the matching JSON error. The form's answer ends at the partner's
// return_url, or at the processor's page, so the page's CSP lets forms
// lead there.
func (s *Server) renderCheckout(c *gin.Context, err error, view checkoutPage) {
	if err == nil {
		err = view.Closed
	}
	status := http.StatusOK
	if err != nil {
		status, view.Error = s.formError(c, err)
	}
	if u, err := url.Parse(view.ReturnURL); err == nil {
		c.Set(formActionCtxKey, strings.TrimSpace(u.Scheme+"://"+u.Host+" "+view.ProcessorOrigin))
	}
	view.Title, view.Price, view.CSRF = "Buy "+view.Domain, page.Money(view.Currency, view.PriceCents), s.formCSRF(c)
	s.render(c, status, "checkout.html", view)
}

// checkoutError shows why a checkout link does not work: 400 not ours or
// changed, 404 unknown, 410 expired.
func (s *Server) checkoutError(c *gin.Context, err error) {
	status, msg := s.formError(c, err)
	s.render(c, status, "checkout_error.html", gin.H{"Title": "Checkout link error", "Message": msg})
}
