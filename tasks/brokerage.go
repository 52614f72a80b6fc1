package tasks

import (
	"github.com/hibiken/asynq"
)

// TypeBrokerageProbe looks at a domain's home page for the brokerage
// (internal/siteprobe): a domain running an active site is not brokered.
const TypeBrokerageProbe = "brokerage:probe"

// BrokerageProbePayload names the domain to probe. A late probe's verdict
// replacing a newer one's is as true: both looked at the site.
type BrokerageProbePayload struct {
	Domain string `json:"domain"`
}

// NewBrokerageProbeTask makes the task of one probe.
func NewBrokerageProbeTask(p BrokerageProbePayload) (*asynq.Task, error) {
	return newTask(TypeBrokerageProbe, p)
}

// ParseBrokerageProbe decodes the payload of a TypeBrokerageProbe task.
func ParseBrokerageProbe(t *asynq.Task) (BrokerageProbePayload, error) {
	return parse[BrokerageProbePayload](t)
}
