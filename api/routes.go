package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/api/openapi"
	partnerapi "github.com/domaind/domaind/api/partner"
	"github.com/domaind/domaind/dashboard/console"
	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/brokerage"
	"github.com/domaind/domaind/internal/checkout"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/knownaddr"
	"github.com/domaind/domaind/internal/nonce"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/referral"
)

// routes lists every route of the API in one place.
func (s *Server) routes(monitoring http.Handler, healthOnly bool) {
	e := s.engine
	e.Use(requestID, errorShape, s.securityHeaders, s.deprecationHeaders, s.accessLog, s.recovery, clientIdentity(s.cfg.TrustedProxies), s.routeBodyLimit, s.utf8Only)
	e.NoRoute(s.browsable(func(c *gin.Context) error {
		return fault.New(fault.NotFound, "There is nothing at %s %s.", c.Request.Method, c.Request.URL.Path)
	}))
	e.NoMethod(s.resp.Handle(func(c *gin.Context) error {
		allowHead(c.Writer.Header())
		return fault.New(fault.MethodNotAllowed, "%s is not allowed on %s", c.Request.Method, c.Request.URL.Path)
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
	pub.handle("POST", "/api/domain/search", s.idempotent, s.limit(searchLimit), s.withBearer, s.resp.Handle(s.searchDomains))
	pub.handle("POST", "/api/tools/whois", s.idempotent, s.limit(whoisQuota), s.resp.Handle(s.createWhoisLookup))
	pub.handle("POST", "/api/tools/:slug", s.idempotent, s.resp.Handle(s.runTool))
	pub.handle("GET", "/api/tools/:slug/status/:jobId", s.resp.Handle(s.getToolJob))
	pub.handle("GET", "/api/batch", s.resp.Handle(s.batchCatalog))
	pub.handle("POST", "/api/batch", writeTimeout(batchWriteTimeout), s.idempotent, s.limit(batchLimit), s.resp.Handle(s.runBatch))
	pub.handle("GET", "/api/market/listings", s.limit(listingsLimit), s.withBearer, s.resp.Handle(s.listListings))
	pub.handle("GET", "/api/pricing/tld", s.limit(pricingLimit), s.resp.Handle(s.getTLDPrice))
	pub.handle("GET", "/api/tlds/:tld/metadata", s.limit(pricingLimit), s.resp.Handle(s.getTLDMetadata))

	e.POST("/api/auth/signup", s.idempotent, s.limit(signUpLimit), s.resp.Handle(s.signUp))
	e.POST("/api/auth/login", s.limit(signInLimit), s.resp.Handle(s.signIn))
	auth := e.Group("/api/auth", s.withSession, s.requireSession)
	auth.GET("/me", s.resp.Handle(s.getMe))
	auth.POST("/logout", s.resp.Handle(s.signOut))

	keys := e.Group("/api/v1/keys", s.withSession, s.requireSession)
	keys.POST("", s.idempotent, s.resp.Handle(s.createKey))
	keys.GET("", s.resp.Handle(s.listKeys))
	keys.DELETE("/:key", s.resp.Handle(s.revokeKey))
	domains := e.Group("/api/domains", s.withSession, s.requireSession)
	domains.GET("", s.resp.Handle(s.listDomains))
	domains.POST("/bulk/:op", s.idempotent, s.limit(bulkLimit), s.resp.Handle(s.runBulk))
	domains.GET("/bulk/:id", s.resp.Handle(s.getBulkOp))
	cart := e.Group("/api/cart", s.withSession, s.requireSession)
	cart.GET("", s.resp.Handle(s.getCart))
	cart.DELETE("/items/:id", s.resp.Handle(s.deleteCartItem))

	e.GET("/api/v1/domains/available", s.requireKey, s.resp.Handle(s.getMarketAvailability))

	pub.handle("GET", "/.well-known/oauth-authorization-server", s.authServerMetadata)
	pub.handle("GET", "/.well-known/oauth-protected-resource", s.protectedResourceMetadata("", "domaind API"))
	pub.handle("GET", "/.well-known/oauth-protected-resource"+apiResourcePath, s.protectedResourceMetadata(apiResourcePath, "domaind API"))
	s.mountMCP(e)
	pub.handle("GET", "/api", s.withBearer, s.apiRoot)
	pub.handle("POST", "/api/oauth/register", s.idempotent, s.limit(oauthRegisterLimit), s.registerClient)
	pub.handle("POST", "/api/oauth/token", s.limit(oauthLimit), s.token)
	pub.handle("POST", "/api/oauth/revoke", s.limit(oauthLimit), s.revoke)

	e.GET("/assets/site.css", gin.WrapF(page.ServeCSS))
	e.GET("/assets/search.js", gin.WrapF(page.ServeScript))
	e.GET("/favicon.svg", gin.WrapF(page.ServeIcon))
	e.GET("/favicon.ico", gin.WrapF(page.ServeIcon))
	pages := e.Group("", s.withSession)
	pages.GET("/oauth/authorize", s.authorize)
	pages.POST("/oauth/authorize", s.authorize)
	pages.GET("/search", s.searchPage)
	pages.GET("/login", s.signInForm)
	pages.POST("/login", s.limit(signInLimit), s.signInSubmit)
	pages.GET("/signup", s.signUpForm)
	pages.POST("/signup", s.limit(signUpLimit), s.signUpSubmit)
	pages.GET("/account", s.accountPage)
	pages.POST("/logout", s.signOutSubmit)
	e.POST(StripeWebhookPath, s.bodyLimit(maxNoticeBytes), s.resp.Handle(s.stripeWebhook))
	e.GET(checkout.PagePath, s.checkoutForm)
	e.POST(checkout.PagePath, s.limit(checkoutPayLimit), s.checkoutSubmit)
	e.GET(brokerage.ProgressPath, s.brokerageProgress)
	e.GET(referral.ClickPath+":code", s.limit(clickLimit), s.browsable(s.followLink))
	e.GET(referral.MarketPath, s.limit(listingsLimit), s.withSession, s.marketSearchPage)
	e.GET(referral.MarketPath+"/:domain", s.limit(listingsLimit), s.withSession, s.marketNamePage)
	e.POST(referral.MarketPath+"/:domain/buy", s.withSession, s.marketBuySubmit)

	ops := e.Group("/api/ops", s.opsOnly)
	ops.POST("/canaries", s.idempotent, s.resp.Handle(s.createCanary))
	ops.GET("/canaries/:id", s.resp.Handle(s.getCanary))
	ops.POST("/partners", s.idempotent, s.resp.Handle(s.createPartner))
	ops.GET("/partners", s.resp.Handle(s.listPartners))
	ops.PATCH("/partners/:id", s.resp.Handle(s.updatePartner))
	ops.POST("/partners/:id/approve", s.resp.Handle(s.approvePartner))
	ops.POST("/partners/:id/credentials", s.resp.Handle(s.issueCredential))
	ops.DELETE("/partners/:id/credentials/:key_id", s.resp.Handle(s.revokeCredential))
	ops.POST("/listings", s.idempotent, s.resp.Handle(s.addListing))
	ops.DELETE("/listings/:id", s.resp.Handle(s.removeListing))
	ops.GET("/orders", s.resp.Handle(s.listOrders))
	ops.GET("/orders/:public_id", s.resp.Handle(s.getOrder))
	for _, action := range order.AllActions {
		ops.POST("/orders/:public_id/"+string(action), s.resp.Handle(s.moveOrder(action)))
	}
	ops.GET("/brokerage/:case_id", s.resp.Handle(s.getCase))
	for _, action := range brokerage.AllActions {
		ops.POST("/brokerage/:case_id/"+string(action), s.resp.Handle(s.moveCase(action)))
	}
	ops.POST("/settlements/runs", s.resp.Handle(s.requestRun))
	ops.GET("/settlements/runs", s.resp.Handle(s.listRuns))
	ops.GET("/settlements/runs/:id", s.resp.Handle(s.getRun))
	ops.GET("/settlements/runs/:id/statements.csv", s.resp.Handle(s.runCSV))
	ops.GET("/payouts", s.resp.Handle(s.listPayouts))
	ops.POST("/payouts/:id/mark-paid", s.resp.Handle(s.markPayoutPaid))
	ops.GET("/payments", s.resp.Handle(s.listPayments))
	ops.POST("/payments/:id/paid-by-hand", s.resp.Handle(s.paymentPaidByHand))
	ops.POST("/refunds/:id/paid-by-hand", s.resp.Handle(s.refundPaidByHand))
	ops.POST("/refunds/:id/retry", s.resp.Handle(s.retryCardRefund))
	ops.GET("/backlog", s.resp.Handle(s.getBacklog))
	console.New(s.svc, asynq.NewInspectorFromRedisClient(s.redis), s.outbox, s.monitoring, s.servedOverHTTPS(), s.log).Register(e.Group("/ops", s.opsOnly))

	e.POST("/api/partner/applications", s.withSession, s.requireSession, s.idempotent, s.resp.Handle(s.applyAsPartner))
	pages.POST("/account/partner-application", s.accountForm(s.applySubmit))
	pages.POST("/account/keys", s.accountForm(s.keySubmit))
	pages.POST("/account/keys/:id/revoke", s.accountForm(s.keySubmit))
	pages.POST("/account/apps/:client_id/revoke", s.accountForm(s.appSubmit))
	pages.POST("/account/partner/:action", s.accountForm(s.partnerSubmit))
	partnerapi.New(partnerapi.Deps{
		Partners: s.svc.Partners, Inventory: s.svc.Inventory, Webhooks: s.svc.Webhooks, Orders: s.svc.Orders, Checkout: s.svc.Checkout, Settlements: s.svc.Settlements, Payouts: s.svc.Payouts,
		Outbox: s.outbox, Catalog: s.svc.Catalog, Brokerage: s.svc.Brokerage, Referrals: s.svc.Referrals,
		Limiter: s.svc.Limiter, Nonces: nonce.NewStore(s.redis, nonce.TTL), Addresses: knownaddr.New(s.redis, s.now), Idempotent: s.idempotent, Log: s.log, Now: s.now,
	}).Mount(e)
}

// allowHead adds HEAD to a 405's Allow where it lists GET: the router
// knows GET routes only, and ServeHTTP answers a HEAD wherever GET works.
func allowHead(h http.Header) {
	methods := strings.Split(h.Get("Allow"), ", ")
	if i := slices.Index(methods, http.MethodGet); i >= 0 && !slices.Contains(methods, http.MethodHead) {
		h.Set("Allow", strings.Join(slices.Insert(methods, i+1, http.MethodHead), ", "))
	}
}
