// Package webhook is how events reach partners (SPEC §6): Emit records an
// event inside the caller's transaction, with a delivery to the partner's
// endpoint and its task (outbox), so there is never a change without its
// event; Deliver POSTs the signed envelope through the SSRF-safe client;
// History replays the events a partner missed.
//
// A delivery succeeds on a 2xx within the timeout (5 s). Anything else is
// retried by the webhook:deliver task on tasks.WebhookSchedule, with the
// same event id each time; a delivery out of retries is failed, and an
// endpoint whose deliveries fail MaxFailures times in a row is set
// inactive until the partner registers it again.
//
// The events of one subject (an order) are delivered in the order they
// happened, one at a time: see Emit.
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/internal/hmacsig"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// Headers of a delivery besides the signature (hmacsig.HeaderSignature).
const (
	HeaderEventID   = "X-Service-Event-Id"
	HeaderTimestamp = "X-Service-Timestamp"
)

// Defaults of a Service.
const (
	// DefaultTimeout is how long a receiver has to answer (SPEC §8: 5 s).
	DefaultTimeout = 5 * time.Second
	// MaxFailures is how many deliveries in a row may fail for good before
	// the endpoint is set inactive.
	MaxFailures = 5
)

// TypeTest is the event a partner sends itself to check its receiver.
const TypeTest = "webhook.test"

// Service is the endpoints, events and deliveries of one database.
type Service struct {
	db    *gorm.DB
	seal  *secret.Sealer
	fetch *fetch.Client
	// names checks a URL given at registration: it takes only IP addresses
	// and public names, and answers a name that does not resolve as one
	// that resolves inside, so that registering tells a partner nothing of
	// the service's own network (fetch.Client.HidingNames).
	names *fetch.Client
	// secretKey seals the cursors of Deliveries.
	secretKey []byte
	now       func() time.Time
}

// New returns a Service on db with endpoint secrets sealed under secretKey
// (DOMAIND_SECRET_KEY), delivering through the SSRF guard with the networks
// of allow exempt (DOMAIND_FETCH_ALLOW_CIDRS: tests' receivers). A delivery
// follows no redirect: a 3xx is not an acknowledgement.
func New(db *gorm.DB, secretKey []byte, allow []netip.Prefix, now func() time.Time) *Service {
	client := fetch.New(fetch.Options{Allow: allow, Timeout: DefaultTimeout, NoRedirects: true})
	return &Service{db: db, seal: secret.NewSealer(secretKey, "webhook secrets"), fetch: client, names: client.HidingNames(),
		secretKey: secretKey, now: now}
}

// Register sets the partner's endpoint for env: url (https; plain http in
// the sandbox, test mode as payment processors have it, or to a network
// exempt from the SSRF guard, that is, in tests) and the
// secret deliveries are signed with (16 to 256 printable characters). It
// checks the URL with the SSRF guard now, and every delivery again: now
// as the free tools check theirs (an IP address or a public name, and one
// refusal for a name missing or inside), unless the URL's network is
// exempt. A registered endpoint is active, its failures forgotten.
func (s *Service) Register(ctx context.Context, partnerID, env, rawURL, sec string) (models.WebhookEndpoint, error) {
	if len(rawURL) > 2000 {
		return models.WebhookEndpoint{}, fault.Invalid("url", "is longer than 2000 characters")
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || u.Fragment != "" || u.User != nil {
		return models.WebhookEndpoint{}, fault.Invalid("url", "must be an absolute https URL without user info or a fragment")
	}
	if len(sec) < 16 || len(sec) > 256 || !printable(sec) {
		return models.WebhookEndpoint{}, fault.Invalid("secret", "must be 16 to 256 printable ASCII characters")
	}
	exempt := s.fetch.Exempt(ctx, rawURL)
	if u.Scheme != "https" && !(u.Scheme == "http" && (env == models.EnvSandbox || exempt)) {
		return models.WebhookEndpoint{}, fault.Invalid("url", "must be https for live credentials (plain http is for the sandbox)")
	}
	check := s.names
	if exempt {
		check = s.fetch
	}
	_, err = check.Check(ctx, rawURL)
	var be *fetch.BlockedError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &be):
		return models.WebhookEndpoint{}, &fault.Error{Code: fault.Validation, Field: "url", Message: "url " + be.Reason, Err: err}
	case errors.As(err, &dnsErr): // the resolver failed, not the name: its words are not shown
		e := fault.Invalid("url", "%s could not be resolved (its DNS did not answer); try again later", u.Hostname())
		e.Err = fault.ErrRetryLater
		return models.WebhookEndpoint{}, e
	case err != nil:
		return models.WebhookEndpoint{}, err
	}
	now := s.now().UTC()
	e := models.WebhookEndpoint{ID: secret.NewID("whe_"), PartnerID: partnerID, Environment: env, URL: rawURL,
		SecretSealed: s.seal.Seal([]byte(sec)), Active: true, CreatedAt: now, UpdatedAt: now}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var old models.WebhookEndpoint
		err := tx.Take(&old, "partner_id = ? AND environment = ?", partnerID, env).Error
		switch {
		case errors.Is(err, gorm.ErrRecordNotFound):
			return tx.Create(&e).Error
		case err != nil:
			return err
		}
		e.ID, e.CreatedAt = old.ID, old.CreatedAt
		return tx.Model(&models.WebhookEndpoint{ID: old.ID}).
			Select("url", "secret_sealed", "active", "failures", "updated_at").Updates(&e).Error
	})
	if err != nil {
		return models.WebhookEndpoint{}, fmt.Errorf("register webhook: %w", err)
	}
	return e, nil
}

func printable(s string) bool {
	for i := range len(s) {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// Endpoint returns the partner's endpoint for env, or a not_found error.
func (s *Service) Endpoint(ctx context.Context, partnerID, env string) (models.WebhookEndpoint, error) {
	var e models.WebhookEndpoint
	err := s.db.WithContext(ctx).Take(&e, "partner_id = ? AND environment = ?", partnerID, env).Error
	return e, models.FoundOr(err, "webhook endpoint", "no webhook endpoint is registered for %s", env)
}

// Emit records an event of partnerID in env, with data (JSON-encodable),
// inside tx, and a delivery with its task when the partner has an active
// endpoint for env. Call it in the transaction of the change the event
// tells of.
//
// Events of one subject (an order's public id, say; "" for none) reach the
// endpoint in the order they happened: while an earlier delivery of the
// subject is pending, the new one waits without a task, and settling the
// earlier one (delivered, or failed for good) gives the next its task.
func Emit(tx *outbox.Tx, partnerID, env, subject, typ string, data any, now time.Time) (models.Event, error) {
	evs, err := EmitAll(tx, []Emission{{PartnerID: partnerID, Environment: env, Subject: subject, Type: typ, Data: data}}, now)
	if err != nil {
		return models.Event{}, err
	}
	return evs[0], nil
}

// Emission is an event to emit: Emit's arguments.
type Emission struct {
	PartnerID, Environment, Subject, Type string
	Data                                  any
	// New says the subject was made in this transaction (a new order's
	// first event): no earlier delivery of it can be waiting, so none is
	// looked for.
	New bool
}

// EmitAll is Emit of each of es, in their order, in a few statements
// however many they are (a settlement run emits an event per order). When
// more than one of the deliveries takes a task now, one fan-out task per
// MaxFanOut of them stands for theirs (see FanOut).
func EmitAll(tx *outbox.Tx, es []Emission, now time.Time) ([]models.Event, error) {
	evs := make([]models.Event, len(es))
	// A settlement batch's emissions are of hundreds of partners: a set,
	// not a search of the list for each.
	partnerSet := make(map[string]struct{}, len(es))
	for i, em := range es {
		b, err := json.Marshal(em.Data)
		if err != nil {
			return nil, fmt.Errorf("encode %s data: %w", em.Type, err)
		}
		evs[i] = models.Event{ID: models.NewSortedID("evt_"), PartnerID: em.PartnerID, Environment: em.Environment, Type: em.Type, Data: b, CreatedAt: now.UTC()}
		partnerSet[em.PartnerID] = struct{}{}
	}
	partners := slices.Sorted(maps.Keys(partnerSet)) // the same query arguments for the same batch
	if err := models.InsertEvents(tx.DB, evs); err != nil {
		return nil, fmt.Errorf("record %d events: %w", len(evs), err)
	}
	// Only what a delivery is made from: a batch's endpoints are hundreds,
	// and their URLs and sealed secrets are read by the deliveries.
	var endpoints []models.WebhookEndpoint
	if err := tx.Select("id", "partner_id", "environment").Where("partner_id IN ? AND active", partners).Find(&endpoints).Error; err != nil {
		return nil, fmt.Errorf("find the endpoints of %d partners: %w", len(partners), err)
	}
	if len(endpoints) == 0 {
		return evs, nil // kept for the history; nothing to deliver to
	}
	type key struct{ partner, env string }
	endpointOf := map[key]models.WebhookEndpoint{}
	for _, e := range endpoints {
		endpointOf[key{e.PartnerID, e.Environment}] = e
	}
	var queues []queue
	for _, em := range es {
		if e, ok := endpointOf[key{em.PartnerID, em.Environment}]; ok && em.Subject != "" && !em.New {
			queues = append(queues, queue{e.ID, em.Subject})
		}
	}
	pending, err := markFollowed(tx, queues)
	if err != nil {
		return nil, err
	}
	var deliveries []models.WebhookDelivery
	var released []string   // the deliveries that take a task now
	last := map[queue]int{} // the index of each queue's latest delivery here
	for i, em := range es {
		e, ok := endpointOf[key{em.PartnerID, em.Environment}]
		if !ok {
			continue
		}
		wait := false
		if em.Subject != "" {
			q := queue{e.ID, em.Subject}
			if j, ok := last[q]; ok {
				deliveries[j].Followed, wait = true, true
			} else {
				wait = pending[q]
			}
			last[q] = len(deliveries)
		}
		d := models.WebhookDelivery{ID: models.NewSortedID("whd_"), EventSeq: evs[i].Seq, EndpointID: e.ID, Subject: em.Subject,
			State: models.DeliveryPending, CreatedAt: now.UTC()}
		deliveries = append(deliveries, d)
		if !wait {
			released = append(released, d.ID)
		}
	}
	if err := models.InsertWebhookDeliveries(tx.DB, deliveries); err != nil {
		return nil, fmt.Errorf("record %d deliveries: %w", len(deliveries), err)
	}
	if len(released) == 1 {
		addTask(tx, released[0])
	}
	if len(released) > 1 {
		for ids := range slices.Chunk(released, MaxFanOut) {
			tx.Add(tasks.WebhookFanOutPayload{DeliveryIDs: ids})
		}
	}
	return evs, nil
}

// MaxFanOut caps the deliveries of one fan-out task, and so its payload
// (about 30 bytes a delivery).
const MaxFanOut = 1000

// FanOut gives each of the deliveries ids that is still pending its
// webhook:deliver task, under the delivery's id, through ob: the work of
// a tasks.TypeWebhookFanOut task. A delivery whose task asynq has already
// (waiting, running, retrying, or archived: the rescue frees those) is
// left as it is, so a fan-out run again after a crash, or handed back by
// the rescue after Redis lost some of its tasks, enqueues only what is
// missing.
func (s *Service) FanOut(ctx context.Context, ob *outbox.Outbox, ids []string) error {
	pending, err := PendingOf(s.db.WithContext(ctx), ids)
	if err != nil {
		return err
	}
	if len(pending) == 0 {
		tasks.FoundDone(ctx) // every delivery settled: this fan-out ran before
		return nil
	}
	keyed := make([]outbox.Keyed, len(pending))
	for i, id := range pending {
		keyed[i] = outbox.Keyed{ID: id, Payload: tasks.WebhookDeliverPayload{DeliveryID: id}}
	}
	return ob.Enqueue(ctx, keyed)
}

// PendingOf returns those of the deliveries ids that are pending, in id
// order. It reads them by their keys alone: a settlement run makes its
// deliveries pending faster than the table's statistics follow, and a
// look-up by state too was planned on the index of the pending ones,
// reading every one of them.
func PendingOf(db *gorm.DB, ids []string) ([]string, error) {
	var ds []models.WebhookDelivery
	if err := db.Select("id", "state").Where("id IN ?", ids).Order("id").Find(&ds).Error; err != nil {
		return nil, fmt.Errorf("find the pending of %d deliveries: %w", len(ids), err)
	}
	var pending []string
	for _, d := range ds {
		if d.State == models.DeliveryPending {
			pending = append(pending, d.ID)
		}
	}
	return pending, nil
}

// queue is the deliveries of one subject to one endpoint, which go in
// order.
type queue struct{ endpoint, subject string }

// markFollowed marks the pending deliveries of queues followed, and
// returns the queues that have some. Marking them locks them, which orders
// this against settle: either this finds them pending (and settling them
// then sees the mark, and the new delivery behind), or it waits for them
// to settle and finds none.
func markFollowed(tx *outbox.Tx, queues []queue) (map[queue]bool, error) {
	pending := map[queue]bool{}
	if len(queues) == 0 {
		return pending, nil
	}
	asked := map[queue]bool{}
	subjects := make([]string, 0, len(queues))
	for _, q := range queues {
		if !asked[q] {
			asked[q] = true
			subjects = append(subjects, q.subject)
		}
	}
	// By subject alone, a probe each of the pending deliveries' index
	// (their subjects are orders, each of one endpoint); the pairs asked
	// are picked here.
	var found []models.WebhookDelivery
	err := models.ForUpdate(tx.DB).Select("id", "endpoint_id", "subject").
		Where("subject IN ? AND state = ?", subjects, models.DeliveryPending).Find(&found).Error
	if err != nil {
		return nil, fmt.Errorf("find the pending deliveries of %d subjects: %w", len(subjects), err)
	}
	found = slices.DeleteFunc(found, func(d models.WebhookDelivery) bool { return !asked[queue{d.EndpointID, d.Subject}] })
	if len(found) == 0 {
		return pending, nil
	}
	ids := make([]string, len(found))
	for i, d := range found {
		ids[i] = d.ID
		pending[queue{d.EndpointID, d.Subject}] = true
	}
	if err := tx.Model(&models.WebhookDelivery{}).Where("id IN ?", ids).Update("followed", true).Error; err != nil {
		return nil, fmt.Errorf("mark %d deliveries followed: %w", len(ids), err)
	}
	return pending, nil
}

// addDelivery records a delivery of ev to e about subject, with its task
// unless it waits for an earlier delivery, and returns its id.
func addDelivery(tx *outbox.Tx, ev models.Event, e models.WebhookEndpoint, subject string, wait bool, now time.Time) (string, error) {
	d := models.WebhookDelivery{ID: models.NewSortedID("whd_"), EventSeq: ev.Seq, EndpointID: e.ID, Subject: subject,
		State: models.DeliveryPending, CreatedAt: now.UTC()}
	if err := tx.Create(&d).Error; err != nil {
		return "", fmt.Errorf("record delivery of %s: %w", ev.ID, err)
	}
	if wait {
		return d.ID, nil
	}
	addTask(tx, d.ID)
	return d.ID, nil
}

// addTask adds the task that delivers delivery id.
func addTask(tx *outbox.Tx, id string) { tx.Add(tasks.WebhookDeliverPayload{DeliveryID: id}) }

// Envelope is an event as partners receive it (SPEC §2.14).
type Envelope struct {
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	CreatedAt   time.Time       `json:"created_at"`
	PartnerID   string          `json:"partner_id"`
	Environment string          `json:"environment"`
	Data        json.RawMessage `json:"data"`
}

// NewEnvelope is ev's envelope.
func NewEnvelope(ev models.Event) Envelope {
	return Envelope{ID: ev.ID, Type: ev.Type, CreatedAt: ev.CreatedAt.UTC(), PartnerID: ev.PartnerID, Environment: ev.Environment, Data: ev.Data}
}

// ErrRetry is a delivery attempt that failed and may be retried.
var ErrRetry = errors.New("webhook: delivery failed")

// RetryError is the error of a failed attempt that may be retried; it
// wraps ErrRetry. Failures counts the delivery's failed attempts before
// this one, and it is tasks.Counted: a delivery the rescue handed back
// keeps to tasks.WebhookSchedule.
type RetryError struct {
	URL, Why string
	Failures int
}

func (e *RetryError) Error() string { return fmt.Sprintf("%v: %s: %s", ErrRetry, e.URL, e.Why) }

// Unwrap is ErrRetry.
func (e *RetryError) Unwrap() error { return ErrRetry }

// FailedBefore is Failures (tasks.Counted).
func (e *RetryError) FailedBefore() int { return e.Failures }

// Deliver makes one attempt at delivery id. It returns nil when the
// delivery is settled (delivered, failed for good, or settled already by
// an earlier run), or a *RetryError for an attempt to retry;
// final says this is the last attempt, after which a failure is for good.
// An attempt is the last, too, once the delivery has failed as many times
// as its task retries (tasks.Spec's MaxRetry): a task the rescue hands
// back starts asynq's count of retries again, and the delivery's own count
// ends it.
// Settling a delivery gives the next one of its subject its task, through
// ob.
func (s *Service) Deliver(ctx context.Context, ob *outbox.Outbox, id string, final bool) error {
	a, err := s.load(ctx, id)
	if err != nil {
		return err
	}
	d, e := a.Delivery, a.Endpoint
	if d.State != models.DeliveryPending {
		tasks.FoundDone(ctx)
		return nil
	}
	if !e.Active {
		return s.settle(ctx, ob, d, e, models.DeliveryFailed, 0, "the endpoint is inactive")
	}
	status, why := s.post(ctx, e, a.Event)
	if status >= 200 && status < 300 {
		return s.settle(ctx, ob, d, e, models.DeliveryDelivered, status, "")
	}
	if final || d.Attempts >= tasks.SpecOf(tasks.TypeWebhookDeliver).MaxRetry {
		return s.settle(ctx, ob, d, e, models.DeliveryFailed, status, why)
	}
	if err := s.db.WithContext(ctx).Model(&models.WebhookDelivery{ID: d.ID}).Where("state = ?", models.DeliveryPending).
		Updates(map[string]any{"attempts": gorm.Expr("attempts + 1"), "last_status": status, "last_error": models.Cut(why, 500)}).Error; err != nil {
		return fmt.Errorf("record attempt of %s: %w", id, err)
	}
	return &RetryError{URL: e.URL, Why: why, Failures: d.Attempts}
}

// attempt is what one delivery attempt works with.
type attempt struct {
	Delivery models.WebhookDelivery `gorm:"embedded;embeddedPrefix:d_"`
	Endpoint models.WebhookEndpoint `gorm:"embedded;embeddedPrefix:e_"`
	Event    models.Event           `gorm:"embedded;embeddedPrefix:v_"`
}

// load reads delivery id with its endpoint and event in one query (a
// worker delivering a burst spends its time in round trips), or returns
// gorm.ErrRecordNotFound.
func (s *Service) load(ctx context.Context, id string) (attempt, error) {
	var a attempt
	res := s.db.WithContext(ctx).Raw(`SELECT
		d.id AS d_id, d.event_seq AS d_event_seq, d.endpoint_id AS d_endpoint_id, d.subject AS d_subject,
		d.followed AS d_followed, d.state AS d_state, d.attempts AS d_attempts,
		e.id AS e_id, e.url AS e_url, e.secret_sealed AS e_secret_sealed, e.active AS e_active, e.failures AS e_failures,
		v.seq AS v_seq, v.id AS v_id, v.partner_id AS v_partner_id, v.environment AS v_environment,
		v.type AS v_type, v.data AS v_data, v.created_at AS v_created_at
		FROM webhook_deliveries d
		JOIN webhook_endpoints e ON e.id = d.endpoint_id
		JOIN events v ON v.seq = d.event_seq
		WHERE d.id = ?`, id).Scan(&a)
	if res.Error != nil {
		return a, fmt.Errorf("load delivery %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return a, fmt.Errorf("load delivery %s: %w", id, gorm.ErrRecordNotFound)
	}
	return a, nil
}

// post sends the envelope, signed, and returns the receiver's status (0
// when there was none) and what went wrong, if anything.
func (s *Service) post(ctx context.Context, e models.WebhookEndpoint, ev models.Event) (int, string) {
	sec, err := s.seal.Open(e.SecretSealed)
	if err != nil {
		return 0, "the endpoint's secret cannot be opened (was DOMAIND_SECRET_KEY changed?)"
	}
	body, _ := json.Marshal(NewEnvelope(ev)) // strings, a time and raw JSON always marshal
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(hmacsig.HeaderSignature, hmacsig.WebhookSignature(sec, body))
	req.Header.Set(HeaderEventID, ev.ID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(s.now().Unix(), 10))
	res, err := s.fetch.Do(req) // the client's timeout bounds the whole exchange
	if err != nil {
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			return 0, fmt.Sprintf("no answer within %s", DefaultTimeout)
		}
		return 0, err.Error()
	}
	defer res.Body.Close()
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode < 200 || res.StatusCode >= 300 {
		return res.StatusCode, fmt.Sprintf("the receiver answered %d", res.StatusCode)
	}
	return res.StatusCode, ""
}

// settle gives a delivery its outcome and counts it on its endpoint: a
// success clears the endpoint's failures, a failure for good adds one, and
// MaxFailures of them in a row set the endpoint inactive. The next pending
// delivery of the same subject, if any, gets its task in the same
// transaction.
func (s *Service) settle(ctx context.Context, ob *outbox.Outbox, d models.WebhookDelivery, e models.WebhookEndpoint, state string, status int, why string) error {
	now := s.now().UTC()
	set := map[string]any{"state": state, "attempts": gorm.Expr("attempts + 1"), "last_status": status,
		"last_error": models.Cut(why, 500), "finished_at": now}
	if state == models.DeliveryDelivered {
		set["delivered_at"] = now
	}
	if state == models.DeliveryDelivered && e.Failures == 0 && !d.Followed {
		// The common case in one statement: nothing to count on the
		// endpoint, and no delivery waits behind this one (unless one
		// came since: then no row matches, and the way below is taken).
		res := s.db.WithContext(ctx).Model(&models.WebhookDelivery{ID: d.ID}).
			Where("state = ? AND NOT followed", models.DeliveryPending).Updates(set)
		if res.Error != nil || res.RowsAffected == 1 {
			return res.Error
		}
	}
	return ob.Transaction(ctx, func(tx *outbox.Tx) error {
		res := tx.Model(&models.WebhookDelivery{ID: d.ID}).Where("state = ?", models.DeliveryPending).Updates(set)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error // settled by a concurrent run
		}
		if err := releaseNext(tx, d); err != nil {
			return err
		}
		if state == models.DeliveryDelivered {
			if e.Failures == 0 {
				return nil
			}
			return tx.Model(&models.WebhookEndpoint{ID: e.ID}).Where("failures > 0").Update("failures", 0).Error
		}
		if !e.Active {
			return nil
		}
		return tx.Model(&models.WebhookEndpoint{ID: e.ID}).Updates(map[string]any{
			"failures": gorm.Expr("failures + 1"),
			"active":   gorm.Expr("failures + 1 < ?", MaxFailures),
		}).Error
	})
}

// releaseNext gives the oldest pending delivery of d's subject, if any,
// its task: d, just settled, was the one it waited for.
func releaseNext(tx *outbox.Tx, d models.WebhookDelivery) error {
	if d.Subject == "" {
		return nil
	}
	var next []string
	err := tx.Model(&models.WebhookDelivery{}).
		Where("endpoint_id = ? AND subject = ? AND state = ?", d.EndpointID, d.Subject, models.DeliveryPending).
		Order("event_seq").Limit(1).Pluck("id", &next).Error
	if err != nil {
		return fmt.Errorf("find the next delivery of %s: %w", d.Subject, err)
	}
	if len(next) == 0 {
		return nil
	}
	addTask(tx, next[0])
	return nil
}

// History limits (GET /events).
const (
	DefaultHistoryLimit = 50
	MaxHistoryLimit     = 100
	// Retention is how long events are kept for the history.
	Retention = 30 * 24 * time.Hour
)

// Beginning is the history's cursor before its first event: asked after
// it, the history starts from the oldest event kept. A partner with no
// events yet stores it and polls from it.
const Beginning = "evt_beginning"

// History returns up to limit of the partner's events in env after the
// event afterID ("" or Beginning, or an event deleted after Retention,
// for the oldest kept), oldest first.
func (s *Service) History(ctx context.Context, partnerID, env, afterID string, limit int) ([]models.Event, error) {
	db := s.db.WithContext(ctx)
	var after int64
	if afterID != "" && afterID != Beginning {
		var ev models.Event
		err := db.Select("seq").Take(&ev, "id = ? AND partner_id = ? AND environment = ?", afterID, partnerID, env).Error
		switch {
		case errors.Is(err, gorm.ErrRecordNotFound):
			// An event id made longer ago than the retention names an
			// event deleted since: its partner last polled before then,
			// and goes on from the oldest event kept.
			if made, ok := models.SortedIDTime(afterID, "evt_"); !ok || !made.Before(s.now().Add(-Retention)) {
				return nil, fault.Invalid("after_id", "is not an event of yours (events are kept %d days)", int(Retention/(24*time.Hour)))
			}
		case err != nil:
			return nil, fmt.Errorf("find event %s: %w", afterID, err)
		default:
			after = ev.Seq
		}
	}
	var events []models.Event
	err := db.Transaction(func(tx *gorm.DB) error {
		if models.IsPostgres(tx) {
			// The transactions recording the partner's events end first
			// (models.EventsLock): one that took a lower seq than an event
			// read here and had not committed yet would be passed by for
			// good, as the next page starts after this one.
			if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", models.EventsLock(partnerID, env)).Error; err != nil {
				return err
			}
		}
		return tx.Where("partner_id = ? AND environment = ? AND seq > ?", partnerID, env, after).Order("seq").Limit(limit).Find(&events).Error
	})
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return events, nil
}

// Redeliver sends the partner's event id in env again, to its endpoint
// now, as a new delivery; it returns the delivery's id.
func (s *Service) Redeliver(ctx context.Context, ob *outbox.Outbox, partnerID, env, id string) (string, error) {
	var deliveryID string
	err := ob.Transaction(ctx, func(tx *outbox.Tx) error {
		var ev models.Event
		if err := models.Found(tx.Take(&ev, "id = ? AND partner_id = ? AND environment = ?", id, partnerID, env).Error, "event "+id); err != nil {
			return err
		}
		e, err := activeEndpoint(tx, partnerID, env)
		if err != nil {
			return err
		}
		deliveryID, err = addDelivery(tx, ev, e, "", false, s.now()) // a redelivery is on demand, outside any order
		return err
	})
	return deliveryID, err
}

// SendTest emits a TypeTest event to the partner's endpoint for env, so
// the partner can check its receiver before any sale. It needs an active
// endpoint (a conflict otherwise).
func (s *Service) SendTest(ctx context.Context, ob *outbox.Outbox, partnerID, env string) (models.Event, error) {
	var ev models.Event
	err := ob.Transaction(ctx, func(tx *outbox.Tx) error {
		if _, err := activeEndpoint(tx, partnerID, env); err != nil {
			return err
		}
		var err error
		ev, err = Emit(tx, partnerID, env, "", TypeTest, map[string]string{
			"message": "a test event: your receiver got it if you read this",
		}, s.now())
		return err
	})
	return ev, err
}

// activeEndpoint returns the partner's endpoint for env, or a conflict
// saying what to do when there is none or it is inactive.
func activeEndpoint(tx *outbox.Tx, partnerID, env string) (models.WebhookEndpoint, error) {
	var e models.WebhookEndpoint
	err := tx.Take(&e, "partner_id = ? AND environment = ?", partnerID, env).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return e, fault.New(fault.Conflict, "no webhook endpoint is registered for %s: PUT /api/partner/webhooks first", env)
	}
	if err != nil {
		return e, fmt.Errorf("find the endpoint of %s: %w", partnerID, err)
	}
	if !e.Active {
		return e, fault.New(fault.Conflict, "the webhook endpoint is inactive after repeated failures: register it again (PUT /api/partner/webhooks)")
	}
	return e, nil
}
