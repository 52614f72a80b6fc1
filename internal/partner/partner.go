// Package partner holds who sells through the partner API and with what:
// partners (pending until ops approve them), their signing credentials (a
// key id that says its environment, and a secret shown once and kept only
// sealed under DOMAIND_SECRET_KEY, since verifying a signature needs it
// back) and the scopes each credential grants (SPEC §5.6).
package partner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/account"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/lastuse"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
)

// Scopes of partner credentials (SPEC §5.6).
const (
	ScopeSearch  = "search"
	ScopeEmbed   = "embed"
	ScopeBuy     = "buy"
	ScopeBroker  = "broker"
	ScopeRefer   = "refer"
	ScopeReport  = "report"
	ScopeWebhook = "webhook"
)

// AllScopes lists every scope, in the spec's order.
var AllScopes = []string{ScopeSearch, ScopeEmbed, ScopeBuy, ScopeBroker, ScopeRefer, ScopeReport, ScopeWebhook}

// Key id prefixes say a credential's environment.
const (
	sandboxKeyPrefix = "pk_test_"
	liveKeyPrefix    = "pk_live_"
)

// ErrUnknownKey is a key id that is not a live credential (unknown or
// revoked). The partner API answers it like a wrong signature.
var ErrUnknownKey = errors.New("partner: unknown or revoked key id")

// Service is the partners and credentials of one database.
type Service struct {
	db   *gorm.DB
	seal *secret.Sealer
	now  func() time.Time
	// uses records when each credential was last used.
	uses *lastuse.Recorder
}

// New returns a Service on db sealing secrets under secretKey
// (DOMAIND_SECRET_KEY); now is its clock.
func New(db *gorm.DB, secretKey []byte, now func() time.Time) *Service {
	s := &Service{db: db, seal: secret.NewSealer(secretKey, "partner secrets"), now: now}
	s.uses = lastuse.New(db, &models.PartnerCredential{}, "key_id", func() time.Time { return s.now() })
	return s
}

// Credential is a credential as verification needs it: its secret unsealed.
type Credential struct {
	KeyID       string
	PartnerID   string
	Environment string
	Scopes      []string
	Secret      []byte
}

// Has reports whether the credential grants scope.
func (c Credential) Has(scope string) bool { return slices.Contains(c.Scopes, scope) }

// Issued is a new credential, with the secret shown this once.
type Issued struct {
	KeyID       string    `json:"key_id"`
	Secret      string    `json:"secret"`
	Environment string    `json:"environment"`
	Scopes      []string  `json:"scopes"`
	CreatedAt   time.Time `json:"created_at"`
}

// Create registers a partner, pending until approved.
func (s *Service) Create(ctx context.Context, name, contactEmail string) (models.Partner, error) {
	p, err := s.newPartner(name, contactEmail)
	if err != nil {
		return models.Partner{}, err
	}
	if err := s.db.WithContext(ctx).Create(&p).Error; err != nil {
		return models.Partner{}, fmt.Errorf("create partner: %w", err)
	}
	return p, nil
}

// Apply registers the application of a signed-in person to become a
// partner: a pending partner they own. One application per person: a
// second, even sent at the same moment (the database holds one pending
// application per person), is a conflict.
func (s *Service) Apply(ctx context.Context, userID, name, contactEmail string) (models.Partner, error) {
	p, err := s.newPartner(name, contactEmail)
	if err != nil {
		return models.Partner{}, err
	}
	p.OwnerUserID = &userID
	applied := fault.New(fault.Conflict, "you have applied already; ops will approve the application")
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&models.Partner{}).Where("owner_user_id = ?", userID).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return applied
		}
		return tx.Create(&p).Error
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return models.Partner{}, applied
	}
	if err != nil {
		return models.Partner{}, fmt.Errorf("apply: %w", err)
	}
	return p, nil
}

func (s *Service) newPartner(name, contactEmail string) (models.Partner, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 {
		return models.Partner{}, fault.Invalid("name", "is required, at most 200 characters")
	}
	email, err := account.NormaliseEmail(contactEmail)
	if err != nil {
		return models.Partner{}, fault.Invalid("contact_email", "is not an email address")
	}
	return models.Partner{ID: secret.NewID("prt_"), Name: name, ContactEmail: email, Status: models.PartnerPending,
		CommissionBPS: DefaultCommissionBPS, CreatedAt: s.now().UTC()}, nil
}

// DefaultCommissionBPS is the commission of a new partner, in basis points.
const DefaultCommissionBPS = 1500

// Get returns a partner, or a not_found error.
func (s *Service) Get(ctx context.Context, id string) (models.Partner, error) {
	return get(s.db.WithContext(ctx), id)
}

func get(db *gorm.DB, id string) (models.Partner, error) {
	var p models.Partner
	err := db.Take(&p, "id = ?", id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return models.Partner{}, fault.New(fault.NotFound, "no partner %s", id)
	}
	if err != nil {
		return models.Partner{}, fmt.Errorf("find partner %s: %w", id, err)
	}
	return p, nil
}

// Approve approves a partner. A partner that applied through its owner's
// account gets a sandbox credential with every scope, kept sealed until its
// owner has seen it once (RevealCredential). Approving twice changes
// nothing, at once too (a double-clicked button): the partner's row is
// locked while it is read.
func (s *Service) Approve(ctx context.Context, id string) (models.Partner, error) {
	var p models.Partner
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if p, err = get(models.ForUpdate(tx), id); err != nil {
			return err
		}
		if p.Status == models.PartnerApproved {
			return nil
		}
		now := s.now().UTC()
		p.Status, p.ApprovedAt = models.PartnerApproved, &now
		if p.OwnerUserID != nil {
			issued, err := s.issue(tx, p, models.EnvSandbox, AllScopes)
			if err != nil {
				return err
			}
			p.UnseenCredential = s.seal.Seal([]byte(issued.KeyID + "\x00" + issued.Secret))
		}
		return tx.Model(&models.Partner{ID: p.ID}).Select("status", "approved_at", "unseen_credential").Updates(&p).Error
	})
	if err != nil {
		return models.Partner{}, fmt.Errorf("approve partner %s: %w", id, err)
	}
	return p, nil
}

// MaxCommissionBPS is the highest commission rate: the whole sale.
const MaxCommissionBPS = 10_000

// Terms are what ops may change of a partner; nil fields stay as they
// are.
type Terms struct {
	// CommissionBPS is the partner's rate in basis points (0 to
	// MaxCommissionBPS) for its orders from now on: each order keeps the
	// rate of its day.
	CommissionBPS *int `json:"commission_bps"`
	// Affiliate lets the partner make referral links and earn commission
	// on the sales they bring (internal/referral).
	Affiliate *bool `json:"affiliate"`
}

// Update changes the partner's terms.
func (s *Service) Update(ctx context.Context, id string, t Terms) (models.Partner, error) {
	switch {
	case t.CommissionBPS == nil && t.Affiliate == nil:
		return models.Partner{}, fault.Invalid("commission_bps", "or affiliate is required: the partner's share of its sales in basis points (1500 is 15 %%), or whether it is an affiliate")
	case t.CommissionBPS != nil && (*t.CommissionBPS < 0 || *t.CommissionBPS > MaxCommissionBPS):
		return models.Partner{}, fault.Invalid("commission_bps", "must be from 0 to %d basis points (1500 is 15 %%)", MaxCommissionBPS)
	}
	var p models.Partner
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if p, err = get(tx, id); err != nil {
			return err
		}
		if t.CommissionBPS != nil {
			p.CommissionBPS = *t.CommissionBPS
		}
		if t.Affiliate != nil {
			p.Affiliate = *t.Affiliate
		}
		return tx.Model(&models.Partner{ID: p.ID}).Select("commission_bps", "affiliate").Updates(&p).Error
	})
	if err != nil {
		return models.Partner{}, fmt.Errorf("update partner %s: %w", id, err)
	}
	return p, nil
}

// MaxCredentials is how many live credentials a partner may hold in one
// environment (a key rotation needs two).
const MaxCredentials = 20

// IssueCredential makes a credential of the partner for environment with
// scopes, returning its secret this once. A live credential needs an
// approved partner, and a partner holding MaxCredentials live ones in the
// environment must revoke one first (a conflict otherwise).
func (s *Service) IssueCredential(ctx context.Context, partnerID, environment string, scopes []string) (Issued, error) {
	if err := models.CheckEnvironment(environment); err != nil {
		return Issued{}, err
	}
	scopes, err := checkScopes(scopes)
	if err != nil {
		return Issued{}, err
	}
	p, err := s.Get(ctx, partnerID)
	if err != nil {
		return Issued{}, err
	}
	if environment == models.EnvLive && p.Status != models.PartnerApproved {
		return Issued{}, fault.New(fault.Conflict, "partner %s is %s: live credentials follow approval", p.ID, p.Status)
	}
	var issued Issued
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The partner's row lock serializes its new credentials, so that
		// two requests cannot both take the last one.
		if err := models.ForUpdate(tx).Select("id").Take(&models.Partner{}, "id = ?", p.ID).Error; err != nil {
			return fmt.Errorf("lock partner %s: %w", p.ID, err)
		}
		var live int64
		err := tx.Model(&models.PartnerCredential{}).Where("partner_id = ? AND environment = ? AND revoked_at IS NULL", p.ID, environment).
			Count(&live).Error
		if err != nil {
			return fmt.Errorf("count the credentials of %s: %w", p.ID, err)
		}
		if live >= MaxCredentials {
			return fault.New(fault.Conflict, "partner %s holds %d live %s credentials, the most it may; revoke one first", p.ID, live, environment)
		}
		issued, err = s.issue(tx, p, environment, scopes)
		return err
	})
	return issued, err
}

func (s *Service) issue(db *gorm.DB, p models.Partner, environment string, scopes []string) (Issued, error) {
	prefix := sandboxKeyPrefix
	if environment == models.EnvLive {
		prefix = liveKeyPrefix
	}
	keyID := secret.NewID(prefix)
	sec := "sk_" + secret.New()
	c := models.PartnerCredential{KeyID: keyID, PartnerID: p.ID, Environment: environment, Scopes: strings.Join(scopes, " "),
		SecretSealed: s.seal.Seal([]byte(sec)), CreatedAt: s.now().UTC()}
	if err := db.Create(&c).Error; err != nil {
		return Issued{}, fmt.Errorf("issue credential: %w", err)
	}
	return Issued{KeyID: keyID, Secret: sec, Environment: environment, Scopes: scopes, CreatedAt: c.CreatedAt}, nil
}

// checkScopes validates requested scopes, in AllScopes' order without repeats.
func checkScopes(scopes []string) ([]string, error) {
	if len(scopes) == 0 {
		return nil, fault.Invalid("scopes", "must list at least one of %s", strings.Join(AllScopes, ", "))
	}
	for _, sc := range scopes {
		if !slices.Contains(AllScopes, sc) {
			return nil, fault.Invalid("scopes", "%q is not one of %s", sc, strings.Join(AllScopes, ", "))
		}
	}
	var out []string
	for _, sc := range AllScopes {
		if slices.Contains(scopes, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

// Revoke revokes a credential of the partner; an unknown one is not_found.
func (s *Service) Revoke(ctx context.Context, partnerID, keyID string) error {
	res := s.db.WithContext(ctx).Model(&models.PartnerCredential{}).
		Where("key_id = ? AND partner_id = ? AND revoked_at IS NULL", keyID, partnerID).Update("revoked_at", s.now().UTC())
	if res.Error != nil {
		return fmt.Errorf("revoke %s: %w", keyID, res.Error)
	}
	if res.RowsAffected == 0 {
		return fault.New(fault.NotFound, "partner %s has no live credential %s", partnerID, keyID)
	}
	return nil
}

// Credentials returns the partner's credentials (without secrets), the
// oldest first, revoked ones too.
func (s *Service) Credentials(ctx context.Context, partnerID string) ([]models.PartnerCredential, error) {
	var cs []models.PartnerCredential
	if err := s.db.WithContext(ctx).Where("partner_id = ?", partnerID).Order("created_at, key_id").Find(&cs).Error; err != nil {
		return nil, fmt.Errorf("list the credentials of %s: %w", partnerID, err)
	}
	return cs, nil
}

// Listed is a partner with its credentials and webhook endpoints (without
// secrets), as ops see them: an endpoint set inactive by failures shows.
type Listed struct {
	models.Partner
	Credentials []models.PartnerCredential
	Webhooks    []models.WebhookEndpoint
}

// List returns every partner, newest first, with its credentials.
func (s *Service) List(ctx context.Context) ([]Listed, error) {
	var ps []models.Partner
	if err := s.db.WithContext(ctx).Order("created_at DESC, id").Find(&ps).Error; err != nil {
		return nil, fmt.Errorf("list partners: %w", err)
	}
	var cs []models.PartnerCredential
	if err := s.db.WithContext(ctx).Order("created_at, key_id").Find(&cs).Error; err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	var es []models.WebhookEndpoint
	if err := s.db.WithContext(ctx).Order("environment").Find(&es).Error; err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	creds := map[string][]models.PartnerCredential{}
	for _, c := range cs {
		creds[c.PartnerID] = append(creds[c.PartnerID], c)
	}
	hooks := map[string][]models.WebhookEndpoint{}
	for _, e := range es {
		hooks[e.PartnerID] = append(hooks[e.PartnerID], e)
	}
	out := make([]Listed, len(ps))
	for i, p := range ps {
		out[i] = Listed{Partner: p, Credentials: creds[p.ID], Webhooks: hooks[p.ID]}
	}
	return out, nil
}

// All returns every partner, by name.
func (s *Service) All(ctx context.Context) ([]models.Partner, error) {
	var ps []models.Partner
	if err := s.db.WithContext(ctx).Order("name, id").Find(&ps).Error; err != nil {
		return nil, fmt.Errorf("list partners: %w", err)
	}
	return ps, nil
}

// KeyIDShaped reports whether keyID has a credential's shape: its
// environment's prefix, at most 40 bytes, storable text.
func KeyIDShaped(keyID string) bool {
	return len(keyID) <= 40 && (strings.HasPrefix(keyID, sandboxKeyPrefix) || strings.HasPrefix(keyID, liveKeyPrefix)) && models.Storable(keyID)
}

// Authenticate returns the live credential of keyID with its secret
// unsealed, or ErrUnknownKey (for a key id of no credential's shape too,
// without a query).
func (s *Service) Authenticate(ctx context.Context, keyID string) (Credential, error) {
	if !KeyIDShaped(keyID) {
		return Credential{}, ErrUnknownKey
	}
	var c models.PartnerCredential
	err := s.db.WithContext(ctx).Take(&c, "key_id = ? AND revoked_at IS NULL", keyID).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Credential{}, ErrUnknownKey
	}
	if err != nil {
		return Credential{}, fmt.Errorf("find credential: %w", err)
	}
	sec, err := s.seal.Open(c.SecretSealed)
	if err != nil {
		return Credential{}, fmt.Errorf("open the secret of %s (was DOMAIND_SECRET_KEY changed?): %w", keyID, err)
	}
	return Credential{KeyID: c.KeyID, PartnerID: c.PartnerID, Environment: c.Environment,
		Scopes: strings.Fields(c.Scopes), Secret: sec}, nil
}

// Touch records that keyID was used now, at most once a minute per key.
func (s *Service) Touch(ctx context.Context, keyID string) error {
	return s.uses.Touch(ctx, keyID)
}

// OwnedBy returns the partner the person applied as, or a not_found error.
func (s *Service) OwnedBy(ctx context.Context, userID string) (models.Partner, error) {
	var p models.Partner
	err := s.db.WithContext(ctx).Take(&p, "owner_user_id = ?", userID).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return models.Partner{}, fault.New(fault.NotFound, "you have not applied to be a partner")
	}
	if err != nil {
		return models.Partner{}, fmt.Errorf("find partner of %s: %w", userID, err)
	}
	return p, nil
}

// ErrCredentialUnreadable is a credential sealed under another secret
// key than the service's.
var ErrCredentialUnreadable = errors.New("partner: the unseen credential cannot be opened under this secret key")

// RevealCredential returns, once, the credential issued when partner p's
// application was approved (p as its owner's page read it): the first
// call clears it (ok false after). One that cannot be opened (the
// DOMAIND_SECRET_KEY it was sealed under is not the service's now) is
// ErrCredentialUnreadable and stays, to be shown once that key is back.
func (s *Service) RevealCredential(ctx context.Context, p models.Partner) (keyID, sec string, ok bool, err error) {
	if p.UnseenCredential == nil {
		return "", "", false, nil
	}
	plain, err := s.seal.Open(p.UnseenCredential)
	if err != nil {
		return "", "", false, fmt.Errorf("%w: partner %s: %w", ErrCredentialUnreadable, p.ID, err)
	}
	res := s.db.WithContext(ctx).Model(&models.Partner{}).Where("id = ? AND unseen_credential IS NOT NULL", p.ID).
		Update("unseen_credential", nil)
	if res.Error != nil {
		return "", "", false, fmt.Errorf("clear the unseen credential of %s: %w", p.ID, res.Error)
	}
	if res.RowsAffected == 0 { // another request showed it first
		return "", "", false, nil
	}
	keyID, sec, _ = strings.Cut(string(plain), "\x00")
	return keyID, sec, true, nil
}
