package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/dashboard/console"
	"github.com/domaind/domaind/internal/order"
)

// listOrders answers GET /api/ops/orders: every partner's orders, newest
// first, with the partner API's filters, partner_id and environment.
func (s *Server) listOrders(c *gin.Context) error {
	f, err := console.OrderFilter(c)
	if err != nil {
		return err
	}
	orders, next, err := s.svc.Orders.List(c.Request.Context(), f)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"orders": orders, "next_cursor": httpjson.Nullable(next)})
	return nil
}

// getOrder answers GET /api/ops/orders/{public_id}.
func (s *Server) getOrder(c *gin.Context) error {
	o, err := s.svc.Orders.Ops(c.Request.Context(), c.Param("public_id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, o)
	return nil
}

// moveOrder answers POST /api/ops/orders/{public_id}/{action}: the order
// after the move, or 409 naming its status when the move is not allowed.
// start-transfer takes {"recipient"}; the other actions no body.
func (s *Server) moveOrder(action order.Action) func(c *gin.Context) error {
	return func(c *gin.Context) error {
		var in order.MoveInput
		if action == order.StartTransfer {
			if err := httpjson.DecodeJSON(c, &in, false); err != nil {
				return err
			}
		}
		o, err := s.svc.Orders.Move(c.Request.Context(), c.Param("public_id"), action, in)
		if err != nil {
			return err
		}
		c.JSON(http.StatusOK, o)
		return nil
	}
}
