package console

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/payment"
)

// PaymentFilter reads the payments list's filters from the query.
func PaymentFilter(c *gin.Context) (payment.Filter, error) {
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
func (con *Console) opsPaymentsPage(c *gin.Context) {
	ctx := c.Request.Context()
	view := opsPaymentsPageData{Title: "Payments", Statuses: payment.Statuses, Status: c.Query("status"), OrderID: c.Query("order_id"),
		SessionID: c.Query("session_id"), From: c.Query("from"), To: c.Query("to")}
	status := http.StatusOK
	f, err := PaymentFilter(c)
	var payments []payment.View
	var totals []payment.Total
	var next string
	if err == nil {
		payments, next, err = con.svc.Payments.List(ctx, f)
	}
	if err == nil {
		totals, err = con.svc.Payments.Totals(ctx, f)
	}
	if err != nil {
		status, view.Error = con.problem(c, err)
	}
	for _, t := range totals {
		view.Totals = append(view.Totals, paymentTotalRow{Total: t, Amount: page.Money(t.Currency, t.AmountCents), Refunded: page.Money(t.Currency, t.RefundedCents)})
	}
	for _, p := range payments {
		view.Payments = append(view.Payments, paymentRow{View: p, Amount: page.Money(p.Currency, p.AmountCents),
			Refunded: page.Money(p.Currency, p.RefundedCents), CreatedAt: p.CreatedAt.Format(page.Time)})
	}
	view.Next = page.Older(c.Request.URL.Query(), "/ops/payments", next, "status", "order_id", "session_id", "from", "to")
	con.render(c, status, "ops_payments.html", view)
}
