package api

import "github.com/gin-gonic/gin"

// scopesCtxKey holds the OAuth scopes of the request's bearer token, set by
// the bearer-token middleware. A request without a token has none.
const scopesCtxKey = "domaind.scopes"

// scopePricingRead unmasks marketplace prices (SPEC §5.2).
const scopePricingRead = "pricing:read"

// hasScope reports whether the request's bearer token grants scope.
func hasScope(c *gin.Context, scope string) bool {
	scopes, _ := c.Get(scopesCtxKey)
	granted, _ := scopes.([]string)
	for _, s := range granted {
		if s == scope {
			return true
		}
	}
	return false
}

// pricesVisible is the one masking rule of marketplace prices: buy-now and
// floor prices are shown only to a bearer token holding pricing:read.
func pricesVisible(c *gin.Context) bool { return hasScope(c, scopePricingRead) }
