package partner

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/payout"
	"github.com/domaind/domaind/internal/settlement"
)

// listSettlements answers GET /api/partner/v1/settlements: the partner's
// statements in its credential's environment, newest period first, with
// limit and cursor.
func (a *API) listSettlements(c *gin.Context) error {
	cred := credential(c)
	limit, err := httpjson.PageLimit(c)
	if err != nil {
		return err
	}
	statements, next, err := a.Settlements.Statements(c.Request.Context(), settlement.StatementFilter{
		PartnerID: cred.PartnerID, Environment: cred.Environment, Limit: limit, Cursor: c.Query("cursor")})
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"settlements": httpjson.NonNil(statements), "next_cursor": httpjson.Nullable(next)})
	return nil
}

// listTransactions answers GET /api/partner/v1/transactions: the partner's
// sales and refunds in its credential's environment, newest first, with
// from, to (on when they happened), status (the order's), payment_model,
// limit and cursor, and the totals of the whole filter.
func (a *API) listTransactions(c *gin.Context) error {
	cred := credential(c)
	f := settlement.TransactionFilter{PartnerID: cred.PartnerID, Environment: cred.Environment,
		OrderStatus: c.Query("status"), PaymentModel: c.Query("payment_model"), Cursor: c.Query("cursor")}
	if f.OrderStatus != "" && !slices.Contains(order.Statuses, f.OrderStatus) {
		return fault.Invalid("status", "is not an order status (%s)", strings.Join(order.Statuses, ", "))
	}
	var err error
	if f.From, err = httpjson.TimeParam(c, "from", false); err != nil {
		return err
	}
	if f.To, err = httpjson.TimeParam(c, "to", true); err != nil {
		return err
	}
	if f.Limit, err = httpjson.PageLimit(c); err != nil {
		return err
	}
	txns, next, totals, err := a.Settlements.Transactions(c.Request.Context(), f)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"transactions": httpjson.NonNil(txns), "next_cursor": httpjson.Nullable(next), "totals": totals})
	return nil
}

// listPayouts answers GET /api/partner/v1/payouts and /me/payouts: what
// the service has owed and paid the partner in its credential's
// environment, newest period first, with status, limit and cursor, and
// what was paid and is pending in total.
func (a *API) listPayouts(c *gin.Context) error {
	cred := credential(c)
	limit, err := httpjson.PageLimit(c)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	payouts, next, err := a.Payouts.List(ctx, payout.Filter{PartnerID: cred.PartnerID, Environment: cred.Environment,
		Status: c.Query("status"), Limit: limit, Cursor: c.Query("cursor")})
	if err != nil {
		return err
	}
	totals, err := a.Payouts.Totals(ctx, cred.PartnerID, cred.Environment)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"payouts": payout.Views(payouts), "next_cursor": httpjson.Nullable(next), "totals": totals})
	return nil
}
