package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/payment"
)

// paymentFilter reads the payments list's filters from the query.
func paymentFilter(c *gin.Context) (payment.Filter, error) {
	f := payment.Filter{Status: c.Query("status"), OrderID: c.Query("order_id"), SessionID: c.Query("session_id"), Cursor: c.Query("cursor")}
	var err error
	if f.From, err = httpjson.TimeParam(c, "from", false); err != nil {
		return f, err
	}
	if f.To, err = httpjson.TimeParam(c, "to", true); err != nil {
		return f, err
	}
	if f.Limit, err = httpjson.PageLimit(c); err != nil {
		return f, err
	}
	return f, nil
}

// listPayments answers GET /api/ops/payments: every charge of the hosted
// checkout, newest first, for finance to tie the provider's statements to
// orders.
func (s *Server) listPayments(c *gin.Context) error {
	f, err := paymentFilter(c)
	if err != nil {
		return err
	}
	payments, next, err := s.svc.Payments.List(c.Request.Context(), f)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"payments": payments, "next_cursor": httpjson.Nullable(next)})
	return nil
}

// opsPaymentsPageData is what the ops payments page shows.
type opsPaymentsPageData struct {
	Title, Error string
	// The filters as asked, and what a status can be.
	Status, OrderID, SessionID, From, To string
	Statuses                             []string
	Totals                               []paymentTotalRow
	Payments                             []paymentRow
	// Next is the link to the next page ("" on the last).
	Next string
}

// paymentTotalRow is a line of the page's totals.
type paymentTotalRow struct {
	payment.Total
	Amount, Refunded string
}

// paymentRow is a payment as a row of the page.
type paymentRow struct {
	payment.View
	Amount, Refunded, CreatedAt string
}

// opsPaymentsPage answers GET /ops/payments: the payments the filters of
// GET /api/ops/payments select, a page at a time, with the totals of all
// of them by status and currency.
func (s *Server) opsPaymentsPage(c *gin.Context) {
	ctx := c.Request.Context()
	page := opsPaymentsPageData{Title: "Payments", Statuses: payment.Statuses, Status: c.Query("status"), OrderID: c.Query("order_id"),
		SessionID: c.Query("session_id"), From: c.Query("from"), To: c.Query("to")}
	status := http.StatusOK
	f, err := paymentFilter(c)
	var payments []payment.View
	var totals []payment.Total
	var next string
	if err == nil {
		payments, next, err = s.svc.Payments.List(ctx, f)
	}
	if err == nil {
		totals, err = s.svc.Payments.Totals(ctx, f)
	}
	if err != nil {
		status, page.Error = s.formError(c, err)
	}
	for _, t := range totals {
		page.Totals = append(page.Totals, paymentTotalRow{Total: t, Amount: money(t.Currency, t.AmountCents), Refunded: money(t.Currency, t.RefundedCents)})
	}
	for _, p := range payments {
		page.Payments = append(page.Payments, paymentRow{View: p, Amount: money(p.Currency, p.AmountCents),
			Refunded: money(p.Currency, p.RefundedCents), CreatedAt: p.CreatedAt.Format(pageTime)})
	}
	page.Next = olderPage(c, "/ops/payments", next, "status", "order_id", "session_id", "from", "to")
	s.render(c, status, "ops_payments.html", page)
}
