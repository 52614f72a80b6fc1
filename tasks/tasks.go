// Package tasks is the contract between the processes: task type names
// ("noun:verb"), the queue each type runs on, and a payload struct per type
// that knows its type (Payload). The API, the services and the scheduler
// make tasks with New; the worker decodes each once, with Decode, for the
// handler of its payload type.
package tasks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// Queues, named by what they carry. Weights give interactive lookups most of
// the worker's attention without starving bulk work.
const (
	QueueRDAP        = "rdap"
	QueueTools       = "tools"
	QueueBulk        = "bulk"
	QueueWebhooks    = "webhooks"
	QueueSettlement  = "settlement"
	QueueMaintenance = "maintenance"
)

// QueueWeights maps each queue to its share of worker slots.
var QueueWeights = map[string]int{
	QueueRDAP:        6,
	QueueTools:       3,
	QueueWebhooks:    3,
	QueueBulk:        2,
	QueueSettlement:  1,
	QueueMaintenance: 2,
}

// Spec is how a task type is queued.
type Spec struct {
	Queue    string
	MaxRetry int
	Timeout  time.Duration
	// Backoff, when set, is the first retry delay, doubled at each retry;
	// otherwise asynq's default (tens of seconds, growing fast) applies.
	Backoff time.Duration
	// Schedule, when set, is the wait before each retry, in place of
	// Backoff (MaxRetry is its length).
	Schedule []time.Duration
	// Retention, when set, keeps a finished task in asynq that long: for
	// types whose task info someone reads after the end (a job status, the
	// dashboard's history). It costs Redis work per task, so it is off by
	// default; the outbox's marks keep finished tasks from being enqueued
	// again either way.
	Retention time.Duration
}

// Specs holds the Spec of every task type; the outbox and the scheduler read
// it so a type's queue is decided in this one place.
var Specs = map[string]Spec{
	TypeOutboxSweep:        {Queue: QueueMaintenance, MaxRetry: 0, Timeout: time.Minute},
	TypeMaintenanceCleanup: {Queue: QueueMaintenance, MaxRetry: 3, Timeout: 10 * time.Minute},
	TypeJobsRescue:         {Queue: QueueMaintenance, MaxRetry: 0, Timeout: time.Minute},
	TypeCanaryRun:          {Queue: QueueMaintenance, MaxRetry: 10, Timeout: 10 * time.Minute, Backoff: 10 * time.Second}, // about three hours of retries
	TypeTLDSync:            {Queue: QueueMaintenance, MaxRetry: 5, Timeout: 15 * time.Minute},
	// A lookup retries its registries within the task (worker.LookupRetries);
	// asynq runs it again only when its worker died or its database failed.
	TypeLookupRun:            {Queue: QueueRDAP, MaxRetry: 3, Timeout: 45 * time.Second, Backoff: time.Second},
	TypeRDAPBootstrapRefresh: {Queue: QueueMaintenance, MaxRetry: 3, Timeout: 2 * time.Minute},
	// A bulk op's items carry their own retries; a task retry resumes an op
	// whose worker died or lost its database (1 s, 2 s, 4 s … about 17 min in all).
	TypeBulkRun: {Queue: QueueBulk, MaxRetry: 10, Timeout: 30 * time.Minute, Backoff: time.Second},
	// A crawl is bounded by its pages' timeouts; a caller polls for it.
	TypeToolRun: {Queue: QueueTools, MaxRetry: 3, Timeout: 10 * time.Minute, Backoff: 2 * time.Second},
	// A receiver has 5 s to answer; a failed delivery is retried for about
	// three days on a growing schedule.
	TypeWebhookDeliver: {Queue: QueueWebhooks, MaxRetry: len(WebhookSchedule), Timeout: 30 * time.Second, Schedule: WebhookSchedule},
	// A fan-out is a read of its deliveries and their enqueues; a Redis or
	// database that is down is retried for about 17 minutes (1 s, 2 s, 4 s …).
	TypeWebhookFanOut: {Queue: QueueWebhooks, MaxRetry: 10, Timeout: time.Minute, Backoff: time.Second},
	// A push is one registry call; a registry that is down is retried for
	// about 40 minutes (10 s, 20 s, 40 s …) before the push fails.
	TypeTransferPush: {Queue: QueueBulk, MaxRetry: 8, Timeout: 2 * time.Minute, Backoff: 10 * time.Second},
	// A probe is at most six bounded fetches of someone's web site, like a
	// tool's crawl; a partner polls eligibility for its answer.
	TypeBrokerageProbe: {Queue: QueueTools, MaxRetry: 3, Timeout: 2 * time.Minute, Backoff: 2 * time.Second},
	// A run settles its orders in batches, each committed, so a retry
	// resumes it; a run that fails 10 times is failed for finance to see.
	TypeSettlementRun:      {Queue: QueueSettlement, MaxRetry: 10, Timeout: 30 * time.Minute, Backoff: 10 * time.Second},
	TypeSettlementSchedule: {Queue: QueueSettlement, MaxRetry: 3, Timeout: time.Minute},
	TypeLedgerRollup:       {Queue: QueueSettlement, MaxRetry: 3, Timeout: 30 * time.Minute},
	TypePaymentRefund:      {Queue: QueueSettlement, MaxRetry: 8, Timeout: time.Minute, Backoff: 30 * time.Second}, // about two hours of retries
	TypePaymentReturn:      {Queue: QueueSettlement, MaxRetry: 8, Timeout: time.Minute, Backoff: 30 * time.Second},
	TypePaymentReconcile:   {Queue: QueueMaintenance, MaxRetry: 0, Timeout: time.Minute},
	// A processor's notice makes or refuses an order; the processor has
	// been answered already, so the task retries for about eight hours.
	TypePaymentEvent: {Queue: QueueSettlement, MaxRetry: 10, Timeout: time.Minute, Backoff: 30 * time.Second},
}

// HeaderRequestID is the task header carrying the id of the HTTP request
// that caused the task, so worker logs can be joined with API logs.
const HeaderRequestID = "request_id"

// Jitter is how far a retry of a Schedule may stray from its step, as a
// fraction of it, so that tasks that failed together do not all come back
// at once.
const Jitter = 0.1

// Counted is the error of a failed attempt whose work counts its own
// failures (a webhook delivery's row). asynq's count of a task's retries
// begins again when the rescue hands the task back to Redis; the work's
// does not, and the worker's wait before the next retry follows the larger
// of the two.
type Counted interface {
	error
	// FailedBefore is how many attempts at the work failed before this one.
	FailedBefore() int
}

// Delay is the wait before retry n (from 0) of a task of s: the
// Schedule's step, stretched by jitter (between -Jitter and Jitter), or
// the Backoff doubled n times (at most ten). It answers false when s sets
// neither and asynq's default applies.
func (s Spec) Delay(n int, jitter float64) (time.Duration, bool) {
	switch {
	case len(s.Schedule) > 0:
		d := s.Schedule[min(n, len(s.Schedule)-1)]
		return d + time.Duration(jitter*float64(d)), true
	case s.Backoff > 0:
		return s.Backoff << min(n, 10), true
	}
	return 0, false
}

// Lifetime is the longest from a task's first run to the end of its last
// attempt, barring worker deaths and restarts (a retry after a lease
// expires starts up to two minutes past the Timeout; a graceful shutdown
// requeues a task without counting a retry): every attempt running to
// its Timeout, every retry waiting its longest Delay. It answers false
// when asynq's default decides the delays.
func (s Spec) Lifetime() (time.Duration, bool) {
	life := time.Duration(s.MaxRetry+1) * s.Timeout
	for n := range s.MaxRetry {
		d, ok := s.Delay(n, Jitter)
		if !ok {
			return 0, false
		}
		life += d
	}
	return life, true
}

// SpecOf returns the Spec of typ. Every type has one
// (TestEveryPayloadHasASpec), so a type without is a bug: it panics.
func SpecOf(typ string) Spec {
	s, ok := Specs[typ]
	if !ok {
		panic("tasks: no Spec for task type " + typ)
	}
	return s
}

// Options returns the asynq options of typ from Specs.
func Options(typ string) []asynq.Option {
	s := SpecOf(typ)
	opts := []asynq.Option{asynq.Queue(s.Queue), asynq.MaxRetry(s.MaxRetry), asynq.Timeout(s.Timeout)}
	if s.Retention > 0 {
		opts = append(opts, asynq.Retention(s.Retention))
	}
	return opts
}

// Payloads holds a zero value of every payload type: the task types there
// are, one each (TestEveryPayloadHasASpec checks it against Specs and the
// package's source).
var Payloads = []Payload{
	OutboxSweepPayload{}, MaintenanceCleanupPayload{}, JobsRescuePayload{}, CanaryRunPayload{}, TLDSyncPayload{},
	LookupRunPayload{}, RDAPBootstrapRefreshPayload{}, BulkRunPayload{}, ToolRunPayload{}, WebhookDeliverPayload{},
	WebhookFanOutPayload{}, TransferPushPayload{}, BrokerageProbePayload{}, SettlementRunPayload{},
	SettlementSchedulePayload{}, LedgerRollupPayload{}, PaymentRefundPayload{}, PaymentReturnPayload{},
	PaymentReconcilePayload{}, PaymentEventPayload{},
}

// Payload is what tasks of one type carry: a struct of strings, numbers
// and lists of them that names its type, so that a task is made from its
// payload alone (New) and decoded into it once (Decode).
type Payload interface {
	// TaskType is the type of the tasks that carry the payload.
	TaskType() string
}

// New makes the task that carries p. Payloads are structs of strings,
// numbers and lists of them, which always encode
// (TestEveryPayloadEncodes), so making a task cannot fail.
func New(p Payload) *asynq.Task {
	b, err := json.Marshal(p)
	if err != nil {
		panic(fmt.Sprintf("tasks: encode %s payload: %v", p.TaskType(), err))
	}
	return asynq.NewTask(p.TaskType(), b)
}

// Decode reads t's payload as P (an empty payload, as periodic tasks of
// older versions carry, as P's zero value). A payload that does not decode
// is an error that is never retried.
func Decode[P Payload](t *asynq.Task) (P, error) {
	var p P
	if len(t.Payload()) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return p, fmt.Errorf("decode %s payload: %v: %w", t.Type(), err, asynq.SkipRetry)
	}
	return p, nil
}
