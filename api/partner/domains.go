package partner

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/registry"
)

// searchResult is one hit of GET /domains/search.
type searchResult struct {
	Domain     string  `json:"domain"`
	PriceCents *int64  `json:"price_cents"` // buy-now price; null for offers only
	Currency   string  `json:"currency"`
	Available  bool    `json:"available"`
	Score      float64 `json:"score"`
}

// searchDomains answers GET /domains/search?q=: at most five listings of
// the credential's environment, by words and meaning, best first. There is
// no paging (SPEC §4.2: no bulk export).
func (a *API) searchDomains(c *gin.Context) error {
	env := credential(c).Environment
	hits, err := a.Inventory.Search(c.Request.Context(), env, c.Query("q"))
	if err != nil {
		return err
	}
	now := a.Now()
	results := make([]searchResult, len(hits))
	for i, h := range hits {
		results[i] = searchResult{Domain: h.Domain, PriceCents: h.BINCents, Currency: h.Currency, Available: h.Available(now), Score: h.Score}
	}
	c.JSON(http.StatusOK, gin.H{"results": results, "count": len(results)})
	return nil
}

// domainDetail is GET /domains/{name}: the listing, and the rules of its
// TLD (SPEC §2.8's fields; null before the TLD is synced).
type domainDetail struct {
	Domain      string             `json:"domain"`
	TLD         string             `json:"tld"`
	PriceCents  *int64             `json:"price_cents"`
	FloorCents  *int64             `json:"floor_cents"`
	Currency    string             `json:"currency"`
	Available   bool               `json:"available"`
	HeldUntil   *time.Time         `json:"held_until"` // a sale in progress holds the name until then
	ListedAt    time.Time          `json:"listed_at"`
	TLDMetadata *registry.Metadata `json:"tld_metadata"`
}

func (a *API) getDomain(c *gin.Context) error {
	ctx := c.Request.Context()
	it, err := a.Inventory.Find(ctx, credential(c).Environment, c.Param("name"))
	if e, ok := fault.As(err); ok && e.Code == fault.Validation {
		e.Field = "name" // the path's parameter
	}
	if err != nil {
		return err
	}
	cat, err := a.Catalog.Get(ctx)
	if err != nil {
		return err
	}
	d := domainDetail{
		Domain: it.Domain, TLD: it.TLD, PriceCents: it.BINCents, FloorCents: it.FloorCents, Currency: it.Currency,
		Available: it.Available(a.Now()), ListedAt: it.CreatedAt.UTC(),
	}
	if !d.Available && it.LockedUntil != nil {
		held := it.LockedUntil.UTC()
		d.HeldUntil = &held
	}
	if t, ok := cat.TLDs[it.TLD]; ok {
		d.TLDMetadata = &t.Metadata
	}
	c.JSON(http.StatusOK, d)
	return nil
}

// availability is GET /availability: an unlisted name is not available
// (SPEC §4.2: 200, not 404), with no price.
type availability struct {
	Domain     string  `json:"domain"`
	Available  bool    `json:"available"`
	PriceCents *int64  `json:"price_cents"`
	Currency   *string `json:"currency"`
}

func (a *API) getAvailability(c *gin.Context) error {
	domain, err := requiredDomain(c)
	if err != nil {
		return err
	}
	it, err := a.Inventory.Find(c.Request.Context(), credential(c).Environment, domain)
	if e, ok := fault.As(err); ok && e.Code == fault.NotFound {
		c.JSON(http.StatusOK, availability{Domain: domain, Available: false})
		return nil
	}
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, availability{Domain: it.Domain, Available: it.Available(a.Now()), PriceCents: it.BINCents, Currency: &it.Currency})
	return nil
}

// pricing is GET /pricing.
type pricing struct {
	Domain      string `json:"domain"`
	BuyNowCents *int64 `json:"buy_now_cents"`
	FloorCents  *int64 `json:"floor_cents"`
	Currency    string `json:"currency"`
}

func (a *API) getPricing(c *gin.Context) error {
	domain, err := requiredDomain(c)
	if err != nil {
		return err
	}
	it, err := a.Inventory.Find(c.Request.Context(), credential(c).Environment, domain)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, pricing{Domain: it.Domain, BuyNowCents: it.BINCents, FloorCents: it.FloorCents, Currency: it.Currency})
	return nil
}

// requiredDomain reads the domain query parameter, normalised.
func requiredDomain(c *gin.Context) (string, error) {
	raw := c.Query("domain")
	if raw == "" {
		return "", fault.Invalid("domain", "is required: the domain name to look up")
	}
	name, err := domainname.Parse(raw)
	if err != nil {
		return "", fault.InvalidErr("domain", err)
	}
	return name.Registrable, nil
}
