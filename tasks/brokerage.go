package tasks

import (
	"time"

	"github.com/hibiken/asynq"
)

// TypeBrokerageProbe looks at a domain's home page for the brokerage
// (internal/siteprobe): a domain running an active site is not brokered.
const TypeBrokerageProbe = "brokerage:probe"

// BrokerageProbePayload names the domain and the claim of the site check
// that asked for the probe (models.SiteCheck.RequestedAt), so a result
// lands only on the check that asked for it.
type BrokerageProbePayload struct {
	Domain      string    `json:"domain"`
	RequestedAt time.Time `json:"requested_at"`
}

// NewBrokerageProbeTask makes the task of one probe.
func NewBrokerageProbeTask(p BrokerageProbePayload) (*asynq.Task, error) {
	return newTask(TypeBrokerageProbe, p)
}

// ParseBrokerageProbe decodes the payload of a TypeBrokerageProbe task.
func ParseBrokerageProbe(t *asynq.Task) (BrokerageProbePayload, error) {
	return parse[BrokerageProbePayload](t)
}
