package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/openapi"
)

// routes lists every route of the API in one place.
func (s *Server) routes(monitoring http.Handler, healthOnly bool) {
	e := s.engine
	e.Use(requestID, s.securityHeaders, s.deprecationHeaders, s.accessLog, s.recovery, clientIdentity(s.cfg.TrustedProxies), s.bodyLimit(DefaultBodyLimit))
	e.NoRoute(s.handle(func(c *gin.Context) error {
		return Errorf(http.StatusNotFound, "not_found", "no route for %s %s", c.Request.Method, c.Request.URL.Path)
	}))
	e.NoMethod(s.handle(func(c *gin.Context) error {
		return Errorf(http.StatusMethodNotAllowed, "method_not_allowed", "%s is not allowed on %s", c.Request.Method, c.Request.URL.Path)
	}))

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", s.metricsGuard, gin.WrapH(s.metrics.Handler()))

	if monitoring != nil {
		e.Any("/monitoring", s.opsOnly, gin.WrapH(monitoring))
		e.Any("/monitoring/*path", s.opsOnly, gin.WrapH(monitoring))
	}
	if healthOnly {
		return
	}

	docs := openapi.Must(openapi.New(s.base()))
	e.GET("/", s.home)
	e.GET("/docs", gin.WrapF(docs.ServeDocs))
	e.GET("/docs/docs.css", gin.WrapF(docs.ServeCSS))
	e.GET("/openapi.json", gin.WrapF(docs.ServeJSON))
	e.GET("/openapi.yaml", gin.WrapF(docs.ServeYAML))

	pub := &publicRoutes{r: e, seen: map[string]bool{}}
	pub.handle("POST", "/api/domain/search", s.idempotent, s.limit(searchLimit), s.withBearer, s.handle(s.searchDomains))
	pub.handle("POST", "/api/tools/whois", s.idempotent, s.limit(whoisQuota), s.handle(s.createWhoisLookup))
	pub.handle("POST", "/api/tools/:slug", s.idempotent, s.handle(s.runTool))
	pub.handle("GET", "/api/tools/:slug/status/:jobId", s.handle(s.getToolJob))
	pub.handle("GET", "/api/batch", s.handle(s.batchCatalog))
	pub.handle("POST", "/api/batch", writeTimeout(batchWriteTimeout), s.idempotent, s.limit(batchLimit), s.handle(s.runBatch))
	pub.handle("GET", "/api/market/listings", s.limit(listingsLimit), s.withBearer, s.handle(s.listListings))
	pub.handle("GET", "/api/pricing/tld", legacyErrors, s.limit(pricingLimit), s.handle(s.getTLDPrice))
	pub.handle("GET", "/api/tlds/:tld/metadata", s.limit(pricingLimit), s.handle(s.getTLDMetadata))

	e.POST("/api/auth/signup", s.idempotent, s.limit(signUpLimit), s.handle(s.signUp))
	e.POST("/api/auth/login", s.limit(signInLimit), s.handle(s.signIn))
	auth := e.Group("/api/auth", s.withSession, s.requireSession)
	auth.GET("/me", s.handle(s.getMe))
	auth.POST("/logout", s.handle(s.signOut))

	keys := e.Group("/api/v1/keys", s.withSession, s.requireSession)
	keys.POST("", s.idempotent, s.handle(s.createKey))
	keys.GET("", s.handle(s.listKeys))
	keys.DELETE("/:key", s.handle(s.revokeKey))
	domains := e.Group("/api/domains", s.withSession, s.requireSession)
	domains.GET("", s.handle(s.listDomains))
	domains.POST("/bulk/:op", s.idempotent, s.limit(bulkLimit), s.handle(s.runBulk))
	domains.GET("/bulk/:id", s.handle(s.getBulkOp))
	cart := e.Group("/api/cart", s.withSession, s.requireSession)
	cart.GET("", s.handle(s.getCart))
	cart.DELETE("/items/:id", s.handle(s.deleteCartItem))

	e.GET("/api/v1/domains/available", legacyErrors, s.requireKey, s.handle(s.getMarketAvailability))

	pub.handle("GET", "/.well-known/oauth-authorization-server", s.authServerMetadata)
	pub.handle("GET", "/.well-known/oauth-protected-resource", s.protectedResourceMetadata(""))
	pub.handle("GET", "/.well-known/oauth-protected-resource"+apiResourcePath, s.protectedResourceMetadata(apiResourcePath))
	pub.handle("GET", "/api", s.withBearer, s.apiRoot)
	pub.handle("POST", "/api/oauth/register", s.idempotent, s.limit(oauthRegisterLimit), s.registerClient)
	pub.handle("POST", "/api/oauth/token", s.limit(oauthLimit), s.token)
	pub.handle("POST", "/api/oauth/revoke", s.limit(oauthLimit), s.revoke)

	e.GET("/assets/site.css", siteCSS)
	pages := e.Group("", s.withSession)
	pages.GET("/oauth/authorize", s.authorize)
	pages.POST("/oauth/authorize", s.authorize)
	pages.GET("/login", s.signInForm)
	pages.POST("/login", s.limit(signInLimit), s.signInSubmit)
	pages.GET("/signup", s.signUpForm)
	pages.POST("/signup", s.limit(signUpLimit), s.signUpSubmit)
	pages.GET("/account", s.accountPage)
	pages.POST("/logout", s.signOutSubmit)

	ops := e.Group("/api/ops", s.opsOnly)
	ops.POST("/canaries", s.idempotent, s.handle(s.createCanary))
	ops.GET("/canaries/:id", s.handle(s.getCanary))
}
