package tasks

import "github.com/hibiken/asynq"

// TypeLookupRun resolves one WHOIS/RDAP lookup (models.Lookup) and caches
// its answer.
const TypeLookupRun = "lookup:run"

// LookupRunPayload names the lookup to run; the domain is in its row.
type LookupRunPayload struct {
	LookupID string `json:"lookup_id"`
}

// NewLookupRunTask makes the task that runs lookup id.
func NewLookupRunTask(id string) (*asynq.Task, error) {
	return newTask(TypeLookupRun, LookupRunPayload{LookupID: id})
}

// ParseLookupRun decodes the payload of a TypeLookupRun task.
func ParseLookupRun(t *asynq.Task) (LookupRunPayload, error) {
	return parse[LookupRunPayload](t)
}

// TypeRDAPBootstrapRefresh fetches IANA's RDAP bootstrap file and keeps it
// when it is newer than the one in use.
const TypeRDAPBootstrapRefresh = "rdap_bootstrap:refresh"

// NewRDAPBootstrapRefreshTask makes the periodic refresh. It has no payload.
func NewRDAPBootstrapRefreshTask() *asynq.Task { return asynq.NewTask(TypeRDAPBootstrapRefresh, nil) }
