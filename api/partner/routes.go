package partner

import (
	"github.com/gin-gonic/gin"

	partners "github.com/domaind/domaind/internal/partner"
)

// Prefix is the path of the versioned partner API (SPEC §9).
const Prefix = "/api/partner/v1"

// Mount adds every route of the partner API to r (the engine's root).
// Every one is signed (SPEC §5.5) and needs the scope it names; a POST
// retried with its Idempotency-Key gets the first answer again.
func (a *API) Mount(r gin.IRouter) {
	signed := r.Group("", a.authenticate)
	scoped := func(scope string) gin.IRoutes { return signed.Group("", a.requireScope(scope)) }

	search := scoped(partners.ScopeSearch)
	search.GET(Prefix+"/domains/search", a.resp.Handle(a.searchDomains))
	search.GET(Prefix+"/domains/:name", a.resp.Handle(a.getDomain))
	search.GET(Prefix+"/availability", a.resp.Handle(a.getAvailability))
	search.GET(Prefix+"/pricing", a.resp.Handle(a.getPricing))

	embed := scoped(partners.ScopeEmbed)
	embed.POST(Prefix+"/checkout-session", a.Idempotent, a.resp.Handle(a.createCheckoutSession))

	buy := scoped(partners.ScopeBuy)
	buy.POST(Prefix+"/quotes", a.Idempotent, a.resp.Handle(a.createQuote))
	buy.POST(Prefix+"/orders", requireIdempotencyKey(a), a.Idempotent, a.resp.Handle(a.createOrder))
	buy.GET(Prefix+"/orders", a.resp.Handle(a.listOrders))
	buy.GET(Prefix+"/orders/:public_id", a.resp.Handle(a.getOrder))
	buy.POST(Prefix+"/refunds", a.Idempotent, a.resp.Handle(a.createRefund))
	buy.GET(Prefix+"/settlements", a.resp.Handle(a.listSettlements))

	broker := scoped(partners.ScopeBroker)
	broker.GET(Prefix+"/brokerage/eligibility", a.resp.Handle(a.getEligibility))
	broker.POST(Prefix+"/brokerage", a.Idempotent, a.resp.Handle(a.createCase))
	broker.GET(Prefix+"/brokerage/:case_id", a.resp.Handle(a.getCase))

	report := scoped(partners.ScopeReport)
	report.GET(Prefix+"/brokerage", a.resp.Handle(a.listCases))
	report.GET(Prefix+"/transactions", a.resp.Handle(a.listTransactions))
	report.GET(Prefix+"/payouts", a.resp.Handle(a.listPayouts))

	// Referral endpoints also need an affiliate partner.
	refer := signed.Group("", a.requireScope(partners.ScopeRefer), a.requireAffiliate)
	refer.POST(Prefix+"/links", a.Idempotent, a.resp.Handle(a.createLink))
	refer.GET(Prefix+"/links", a.resp.Handle(a.listLinks))
	reports := signed.Group("", a.requireScope(partners.ScopeReport), a.requireAffiliate)
	reports.GET(Prefix+"/me/clicks", a.resp.Handle(referralReport(a, false, a.Referrals.Clicks)))
	reports.GET(Prefix+"/me/sales", a.resp.Handle(referralReport(a, true, a.Referrals.Sales)))
	reports.GET(Prefix+"/me/commissions", a.resp.Handle(referralReport(a, true, a.Referrals.Commissions)))
	reports.GET(Prefix+"/me/payouts", a.resp.Handle(a.listPayouts))
	reports.GET(Prefix+"/analytics", a.resp.Handle(referralReport(a, false, a.Referrals.Analytics)))

	hooks := scoped(partners.ScopeWebhook)
	hooks.PUT("/api/partner/webhooks", a.resp.Handle(a.registerWebhook)) // unversioned (SPEC §9)
	hooks.POST(Prefix+"/webhooks/test", a.Idempotent, a.resp.Handle(a.sendTestEvent))
	hooks.GET(Prefix+"/events", a.resp.Handle(a.listEvents))
	hooks.POST(Prefix+"/events/:id/redeliver", a.Idempotent, a.resp.Handle(a.redeliverEvent))
}
