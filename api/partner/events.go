package partner

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
)

// event is an event of the history (SPEC §2.14).
type event struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

func newEvent(ev models.Event) event {
	return event{ID: ev.ID, Type: ev.Type, CreatedAt: ev.CreatedAt.UTC(), Data: ev.Data}
}

// listEvents answers GET /events?after_id=&limit=: the credential's
// environment's events, oldest first, after after_id. next_cursor is the
// after_id to ask with next: the last event's id (after_id again, or null,
// when there is none), so a partner polls with it and never misses one;
// has_more says whether more are there already.
func (a *API) listEvents(c *gin.Context) error {
	limit, err := httpjson.IntParam(c, "limit", webhook.DefaultHistoryLimit, 1, webhook.MaxHistoryLimit)
	if err != nil {
		return err
	}
	cred := credential(c)
	after := c.Query("after_id")
	evs, err := a.Webhooks.History(c.Request.Context(), cred.PartnerID, cred.Environment, after, limit+1)
	if err != nil {
		return err
	}
	more := len(evs) > limit
	evs = evs[:min(len(evs), limit)]
	out := make([]event, len(evs))
	for i, ev := range evs {
		out[i] = newEvent(ev)
	}
	next := webhook.Beginning // no event yet: poll from the first
	switch {
	case len(evs) > 0:
		next = evs[len(evs)-1].ID
	case after != "":
		next = after
	}
	c.JSON(http.StatusOK, gin.H{"events": out, "next_cursor": next, "has_more": more})
	return nil
}

// redeliverEvent sends one event again to the registered endpoint.
func (a *API) redeliverEvent(c *gin.Context) error {
	cred := credential(c)
	id, err := a.Webhooks.Redeliver(c.Request.Context(), a.Outbox, cred.PartnerID, cred.Environment, c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusAccepted, gin.H{"event_id": c.Param("id"), "delivery_id": id})
	return nil
}
