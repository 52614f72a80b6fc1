package api

import (
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/bulkop"
	"github.com/domaind/domaind/internal/catalog"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
)

// cartPrefix starts the opaque ids of cart items.
const cartPrefix = "cart_"

// checkoutPath is where a filled cart is reviewed before payment.
const checkoutPath = "/api/cart"

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

// addToCart answers renew and restore: one cart item per domain, priced
// from the synced TLD prices (a renewal costs its yearly price times the
// years; a restore costs the TLD's restore price). A domain already in the
// cart for the same operation keeps its item, repriced.
func (s *Server) addToCart(c *gin.Context, u models.User, plan bulkop.Plan, domains map[string]models.Domain, snap *catalog.Snapshot) error {
	priceOp, years := registry.OpRenew, plan.Years
	if plan.Op == bulkop.Restore {
		priceOp, years = registry.OpRestore, 1
	}
	var unpriced []string
	items := make([]models.CartItem, 0, len(plan.Domains))
	now := s.now().UTC()
	for _, name := range plan.Domains {
		cents, ok := snap.Price(domains[name].TLD, priceOp)
		if !ok || cents == nil {
			unpriced = append(unpriced, name)
			continue
		}
		items = append(items, models.CartItem{
			ID: secret.NewID(cartPrefix), UserID: u.ID, Domain: name, Op: plan.Op, Years: years,
			PriceCents: *cents * int64(years), Currency: "USD", CreatedAt: now,
		})
	}
	if len(unpriced) > 0 {
		return fault.New(fault.Validation, "no %s price for %s; nothing was added", priceOp, bulkop.Names(unpriced))
	}
	var total int64
	ids := make([]string, len(items))
	for i, it := range items {
		total += it.PriceCents
		ids[i] = it.ID
	}
	if plan.DryRun {
		c.JSON(http.StatusOK, gin.H{"addedToCart": false, "cartItemIds": []string{}, "totalCents": total, "checkoutPath": checkoutPath, "dryRun": true})
		return nil
	}
	err := s.db.WithContext(c.Request.Context()).Transaction(func(tx *gorm.DB) error {
		// One statement per item set: concurrent adds of the same domains
		// meet in the unique index and reprice rather than fail.
		upsert := clause.OnConflict{
			Columns:   []clause.Column{{Name: "user_id"}, {Name: "domain"}, {Name: "op"}},
			DoUpdates: clause.AssignmentColumns([]string{"years", "price_cents"}),
		}
		if err := tx.Clauses(upsert).CreateInBatches(items, 500).Error; err != nil {
			return err
		}
		var rows []models.CartItem
		if err := tx.Select("id", "domain").Where("user_id = ? AND op = ? AND domain IN ?", u.ID, plan.Op, plan.Domains).Find(&rows).Error; err != nil {
			return err
		}
		idOf := make(map[string]string, len(rows))
		for _, r := range rows {
			idOf[r.Domain] = r.ID
		}
		for i, it := range items {
			ids[i] = idOf[it.Domain]
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add to cart: %w", err)
	}
	c.JSON(http.StatusOK, gin.H{"addedToCart": true, "cartItemIds": ids, "totalCents": total, "checkoutPath": checkoutPath})
	return nil
}

// getCart answers GET /api/cart: the signed-in user's items, oldest first,
// with their total.
func (s *Server) getCart(c *gin.Context) error {
	u, _ := currentUser(c)
	var items []models.CartItem
	if err := s.db.WithContext(c.Request.Context()).Where("user_id = ?", u.ID).Order("created_at, domain").Find(&items).Error; err != nil {
		return fmt.Errorf("load cart: %w", err)
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
	id := c.Param("id")
	if !validID(id, cartPrefix) {
		return fault.New(fault.Validation, "%q is not a cart item id", id)
	}
	res := s.db.WithContext(c.Request.Context()).Where("id = ? AND user_id = ?", id, u.ID).Delete(&models.CartItem{})
	if res.Error != nil {
		return fmt.Errorf("delete cart item: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fault.New(fault.NotFound, "no cart item %s", id)
	}
	c.Status(http.StatusNoContent)
	return nil
}
