package tasks

// TypeTLDSync copies TLD prices and rules from the registry provider.
const TypeTLDSync = "tld:sync"

// TLDSyncPayload is the periodic TLD sync's: it has no fields.
type TLDSyncPayload struct{}

// TaskType implements Payload.
func (TLDSyncPayload) TaskType() string { return TypeTLDSync }
