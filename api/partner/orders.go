package partner

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/order"
)

// createQuote answers POST /quotes: a firm price held for the partner.
func (a *API) createQuote(c *gin.Context) error {
	var body struct {
		Domain string `json:"domain"`
	}
	if err := httpjson.DecodeJSON(c, &body, false); err != nil {
		return err
	}
	if body.Domain == "" {
		return fault.Invalid("domain", "is required")
	}
	cred := credential(c)
	q, err := a.Orders.Quote(c.Request.Context(), cred.PartnerID, cred.Environment, body.Domain)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, q)
	return nil
}

// requireIdempotencyKey refuses a request without an Idempotency-Key:
// recording a sale (or opening a case) twice is what it prevents (SPEC §4.2).
func requireIdempotencyKey(a *API) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.GetHeader("Idempotency-Key") == "" {
			a.resp.Error(c, fault.New(fault.MissingIdempotencyKey, "send an Idempotency-Key (a UUID is fine) and reuse it when you retry this request"))
			return
		}
		c.Next()
	}
}

// createOrder answers POST /orders: a sale the partner collected.
func (a *API) createOrder(c *gin.Context) error {
	var body order.NewOrder
	if err := httpjson.DecodeJSON(c, &body, false); err != nil {
		return err
	}
	cred := credential(c)
	o, err := a.Orders.Record(c.Request.Context(), cred.PartnerID, cred.Environment, body)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, o)
	return nil
}

// listOrders answers GET /orders: the partner's orders in its
// environment, newest first.
func (a *API) listOrders(c *gin.Context) error {
	cred := credential(c)
	f, err := OrderFilter(c)
	if err != nil {
		return err
	}
	f.PartnerID, f.Environment = cred.PartnerID, cred.Environment
	orders, next, err := a.Orders.List(c.Request.Context(), f)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"orders": orders, "next_cursor": httpjson.Nullable(next)})
	return nil
}

// OrderFilter reads the filters of an order list: status, domain, from and
// to (RFC 3339, or a date: to then includes that day), limit and cursor.
// The ops list reads the same.
func OrderFilter(c *gin.Context) (order.Filter, error) {
	f := order.Filter{Status: c.Query("status"), Cursor: c.Query("cursor")}
	if d := c.Query("domain"); d != "" {
		name, err := domainname.Parse(d)
		if err != nil {
			return f, fault.InvalidErr("domain", err)
		}
		f.Domain = name.Registrable
	}
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

// getOrder answers GET /orders/{public_id}: one of the partner's orders
// with its timeline.
func (a *API) getOrder(c *gin.Context) error {
	cred := credential(c)
	o, err := a.Orders.Get(c.Request.Context(), cred.PartnerID, cred.Environment, c.Param("public_id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, o)
	return nil
}

// createRefund answers POST /refunds.
func (a *API) createRefund(c *gin.Context) error {
	var body order.NewRefund
	if err := httpjson.DecodeJSON(c, &body, false); err != nil {
		return err
	}
	cred := credential(c)
	r, err := a.Orders.Refund(c.Request.Context(), cred.PartnerID, cred.Environment, body)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, r)
	return nil
}
