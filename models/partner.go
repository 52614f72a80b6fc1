package models

import (
	"hash/fnv"
	"time"

	"github.com/domaind/domaind/internal/fault"
)

// Partner statuses: a partner is pending until ops approve it; only an
// approved partner gets live credentials.
const (
	PartnerPending  = "pending"
	PartnerApproved = "approved"
)

// HousePartnerID is the house seller (migration step 31): the partner the
// marketplace's own pages sell the live inventory through, at a
// commission of 0.
const HousePartnerID = "prt_house"

// Environments of partner credentials, inventories and events. Sandbox sees
// only synthetic inventory and changes nothing live.
const (
	EnvSandbox = "sandbox"
	EnvLive    = "live"
)

// CheckEnvironment refuses env unless it is an environment.
func CheckEnvironment(env string) error {
	if env != EnvSandbox && env != EnvLive {
		return fault.Invalid("environment", "must be sandbox or live")
	}
	return nil
}

// CheckEnvironmentFilter refuses env as a list's filter unless it is an
// environment or "" (both).
func CheckEnvironmentFilter(env string) error {
	if env == "" {
		return nil
	}
	return CheckEnvironment(env)
}

// Partner is a business that sells through the partner API.
type Partner struct {
	ID           string `gorm:"primaryKey;size:40"`
	Name         string `gorm:"size:200;not null"`
	ContactEmail string `gorm:"size:254;not null"`
	Status       string `gorm:"size:16;not null"`
	// CommissionBPS is the partner's share of its sales, in basis points:
	// what it keeps of a sale it collected, or is paid for one the service
	// collected. Each order records the rate of its day.
	CommissionBPS int `gorm:"not null;default:1500"`
	// OwnerUserID is the account that applied, for partners that applied
	// themselves (their sandbox credential is shown on its account page).
	// At most one of a person's applications is pending at once.
	OwnerUserID *string `gorm:"size:36;index;uniqueIndex:idx_partners_pending_owner,where:status = 'pending' AND owner_user_id IS NOT NULL"`
	// Affiliate says ops made the partner an affiliate: it may make
	// referral links and earns commission on the sales they bring
	// (internal/referral).
	Affiliate bool `gorm:"not null;default:false"`
	// UnseenCredential is a credential issued on approval, sealed, until its
	// owner has seen it once on the account page.
	UnseenCredential []byte
	CreatedAt        time.Time
	ApprovedAt       *time.Time
}

// PartnerCredential is one signing key of a partner. The secret is sealed
// (encrypted under DOMAIND_SECRET_KEY): HMAC verification needs it back.
type PartnerCredential struct {
	KeyID        string `gorm:"primaryKey;size:40"`
	PartnerID    string `gorm:"size:40;not null;index"`
	Environment  string `gorm:"size:8;not null"`
	Scopes       string `gorm:"size:200;not null"` // space-separated
	SecretSealed []byte `gorm:"not null"`
	CreatedAt    time.Time
	LastUsedAt   *time.Time
	RevokedAt    *time.Time
}

// SandboxListing is a domain of the synthetic inventory sandbox credentials
// see: the live marketplace (Listing) is never shown to them, nor changed by
// them. Prices are USD cents.
type SandboxListing struct {
	ID          string `gorm:"primaryKey;size:36"`
	Domain      string `gorm:"size:253;not null;uniqueIndex"`
	TLD         string `gorm:"size:63;not null;index"`
	BINCents    *int64
	FloorCents  *int64
	Currency    string `gorm:"size:3;not null"`
	LockedUntil *time.Time
	// HeldBy is the partner whose quote holds the listing until
	// LockedUntil, and HeldSession the checkout session of theirs paying
	// for it, if one is; SoldAt is when an order bought it.
	HeldBy      *string `gorm:"size:40"`
	HeldSession *string `gorm:"size:40"`
	// HeldSince is when HeldBy's quotes of the listing began to hold it:
	// re-quoting extends a hold up to a bound from then.
	HeldSince *time.Time
	SoldAt    *time.Time
	CreatedAt time.Time `gorm:"index"`
}

// WebhookEndpoint is where a partner receives the events of one
// environment. The signing secret is sealed. After repeated failed
// deliveries the endpoint is set inactive until the partner registers it
// again.
type WebhookEndpoint struct {
	ID           string `gorm:"primaryKey;size:40"`
	PartnerID    string `gorm:"size:40;not null;uniqueIndex:idx_webhook_endpoints_partner_env,priority:1"`
	Environment  string `gorm:"size:8;not null;uniqueIndex:idx_webhook_endpoints_partner_env,priority:2"`
	URL          string `gorm:"size:2000;not null"`
	SecretSealed []byte `gorm:"not null"`
	Active       bool   `gorm:"not null"`
	// Failures counts the deliveries given up in a row.
	Failures  int `gorm:"not null;default:0"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Event is something that happened to a partner's business, kept for the
// history (GET /events) and delivered to its webhook endpoint. Seq orders
// the history; ID is what partners see.
type Event struct {
	Seq         int64     `gorm:"primaryKey;autoIncrement;index:idx_events_partner_env_seq,priority:3"`
	ID          string    `gorm:"size:40;not null;uniqueIndex"`
	PartnerID   string    `gorm:"size:40;not null;index:idx_events_partner_env_seq,priority:1"`
	Environment string    `gorm:"size:8;not null;index:idx_events_partner_env_seq,priority:2"`
	Type        string    `gorm:"size:64;not null"`
	Data        []byte    `gorm:"not null"` // JSON
	CreatedAt   time.Time `gorm:"not null;index"`
}

// EventsLock is the Postgres advisory lock of the events of partnerID in
// env. A transaction that records events holds it shared from before their
// Seq is taken until it ends (InsertEvents); a read of the history takes
// it alone first, and then finds no event yet to commit with a Seq below
// one it reads: a Seq is taken when the row is written, not when it
// commits. The partners share eventLockBuckets locks, so that a
// transaction of many partners' events (a settlement batch) holds few.
func EventsLock(partnerID, env string) int64 {
	h := fnv.New64a()
	h.Write([]byte(env + "\x00" + partnerID))
	return eventLockBase + int64(h.Sum64()%eventLockBuckets)
}

const (
	eventLockBuckets = 64
	eventLockBase    = 0x6576656e7473 << 8 // "events", apart from Migrate's lock
)

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// DeliveriesIn returns the condition of the deliveries in state, written
// out rather than passed as a parameter (the index of the failed
// deliveries is partial, and a plan Postgres has cached for any state
// could not use it), and false for a string that is none of the delivery
// states: only those constants ever reach the SQL. The column is
// unqualified; a query of several tables prefixes its alias.
func DeliveriesIn(state string) (string, bool) {
	return writtenOut("state", state, DeliveryPending, DeliveryDelivered, DeliveryFailed)
}

// WebhookDelivery is one event's delivery to one endpoint, through its
// attempts (the webhook:deliver task retries it on a growing schedule).
// Deliveries with a Subject (an order's, say) go to their endpoint one at
// a time in the order of their events: only the oldest pending one of a
// subject has a task, and settling it gives the next one its task.
type WebhookDelivery struct {
	ID       string `gorm:"primaryKey;size:40;index:idx_webhook_deliveries_endpoint_created,priority:3;index:idx_webhook_deliveries_failed,priority:2,where:state = 'failed';index:idx_webhook_deliveries_endpoint_failed,priority:3,where:state = 'failed'"`
	EventSeq int64  `gorm:"not null;index;index:idx_deliveries_pending_subject,priority:3,where:state = 'pending'"`
	// EndpointID leads the indexes of each endpoint's deliveries newest
	// first, all and failed, which a partner's pages read one range per
	// endpoint.
	EndpointID string `gorm:"size:40;not null;index:idx_webhook_deliveries_endpoint_created,priority:1;index:idx_webhook_deliveries_endpoint_failed,priority:1,where:state = 'failed';index:idx_deliveries_pending_subject,priority:2,where:state = 'pending'"`
	// Subject leads the index of pending deliveries, so that a batch of
	// events finds its subjects' pending deliveries a probe each.
	Subject string `gorm:"size:80;not null;default:'';index:idx_deliveries_pending_subject,priority:1,where:state = 'pending'"`
	// Followed says a later delivery of the subject may wait behind this one.
	Followed    bool      `gorm:"not null;default:false"`
	State       string    `gorm:"size:16;not null"`
	Attempts    int       `gorm:"not null;default:0"`
	LastStatus  int       `gorm:"not null;default:0"`
	LastError   string    `gorm:"size:500"`
	CreatedAt   time.Time `gorm:"index;index:idx_webhook_deliveries_endpoint_created,priority:2;index:idx_webhook_deliveries_failed,priority:1,where:state = 'failed';index:idx_webhook_deliveries_endpoint_failed,priority:2,where:state = 'failed'"`
	DeliveredAt *time.Time
	FinishedAt  *time.Time
}
