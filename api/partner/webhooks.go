package partner

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
)

// webhookRegistration is the body of PUT /api/partner/webhooks (SPEC §2.14).
type webhookRegistration struct {
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

// webhookEndpoint is its answer.
type webhookEndpoint struct {
	URL       string    `json:"url"`
	Active    bool      `json:"active"`
	CreatedAt time.Time `json:"created_at"`
}

// registerWebhook sets where the credential's environment's events go.
func (a *API) registerWebhook(c *gin.Context) error {
	var body webhookRegistration
	if err := httpjson.DecodeJSON(c, &body, false); err != nil {
		return err
	}
	cred := credential(c)
	e, err := a.Webhooks.Register(c.Request.Context(), cred.PartnerID, cred.Environment, body.URL, body.Secret)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, webhookEndpoint{URL: e.URL, Active: e.Active, CreatedAt: e.CreatedAt.UTC()})
	return nil
}

// sendTestEvent emits a webhook.test event to the registered endpoint;
// 202, since the delivery happens after the answer.
func (a *API) sendTestEvent(c *gin.Context) error {
	cred := credential(c)
	ev, err := a.Webhooks.SendTest(c.Request.Context(), a.Outbox, cred.PartnerID, cred.Environment)
	if err != nil {
		return err
	}
	c.JSON(http.StatusAccepted, newEvent(ev))
	return nil
}
