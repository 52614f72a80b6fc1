package tasks

// TypeBrokerageProbe looks at a domain's home page for the brokerage
// (internal/siteprobe): a domain running an active site is not brokered.
const TypeBrokerageProbe = "brokerage:probe"

// BrokerageProbePayload names the domain to probe. A late probe's verdict
// replacing a newer one's is as true: both looked at the site.
type BrokerageProbePayload struct {
	Domain string `json:"domain"`
}

// TaskType implements Payload.
func (BrokerageProbePayload) TaskType() string { return TypeBrokerageProbe }
