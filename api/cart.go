package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// cartItemView is one item of the cart.
type cartItemView struct {
	ID         string    `json:"id"`
	Domain     string    `json:"domain"`
	Op         string    `json:"op"`
	Years      int       `json:"years"`
	PriceCents int64     `json:"priceCents"`
	Currency   string    `json:"currency"`
	AddedAt    time.Time `json:"addedAt"`
}

// getCart answers GET /api/cart: the signed-in user's items, oldest first,
// with their total.
func (s *Server) getCart(c *gin.Context) error {
	u, _ := currentUser(c)
	items, err := s.svc.Domains.Cart(c.Request.Context(), u.ID)
	if err != nil {
		return err
	}
	views := make([]cartItemView, len(items))
	var total int64
	for i, it := range items {
		views[i] = cartItemView{ID: it.ID, Domain: it.Domain, Op: it.Op, Years: it.Years, PriceCents: it.PriceCents, Currency: it.Currency, AddedAt: it.CreatedAt}
		total += it.PriceCents
	}
	c.JSON(http.StatusOK, gin.H{"items": views, "count": len(views), "totalCents": total, "currency": "USD"})
	return nil
}

// deleteCartItem answers DELETE /api/cart/items/{id}.
func (s *Server) deleteCartItem(c *gin.Context) error {
	u, _ := currentUser(c)
	if err := s.svc.Domains.RemoveFromCart(c.Request.Context(), u.ID, c.Param("id")); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}
