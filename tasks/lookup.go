package tasks

// TypeLookupRun resolves one WHOIS/RDAP lookup (models.Lookup) and caches
// its answer.
const TypeLookupRun = "lookup:run"

// LookupRunPayload names the lookup to run; the domain is in its row.
type LookupRunPayload struct {
	LookupID string `json:"lookup_id"`
	// Background marks a search's warm-up, which nobody waits for: when
	// the registries cannot be reached its failure is the row's alone,
	// not a failed task for ops to look at.
	Background bool `json:"background,omitempty"`
}

// TaskType implements Payload.
func (LookupRunPayload) TaskType() string { return TypeLookupRun }

// TypeRDAPBootstrapRefresh fetches IANA's RDAP bootstrap file and keeps it
// when it is newer than the one in use.
const TypeRDAPBootstrapRefresh = "rdap_bootstrap:refresh"

// RDAPBootstrapRefreshPayload is the periodic refresh's: it has no fields.
type RDAPBootstrapRefreshPayload struct{}

// TaskType implements Payload.
func (RDAPBootstrapRefreshPayload) TaskType() string { return TypeRDAPBootstrapRefresh }
