package partner

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/checkout"
)

// createCheckoutSession answers POST /checkout-session: a link to the
// service's checkout page for one listed name, paid by the partner's buyer.
func (a *API) createCheckoutSession(c *gin.Context) error {
	var body checkout.NewSession
	if err := httpjson.DecodeJSON(c, &body, false); err != nil {
		return err
	}
	cred := credential(c)
	s, err := a.Checkout.Create(c.Request.Context(), cred.PartnerID, cred.Environment, body)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, s)
	return nil
}
