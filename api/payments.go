package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/dashboard/console"
)

// listPayments answers GET /api/ops/payments: every charge of the hosted
// checkout, newest first, for finance to tie the provider's statements to
// orders.
func (s *Server) listPayments(c *gin.Context) error {
	f, err := console.PaymentFilter(c)
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
