package account

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
)

// MaxKeys is how many live developer keys one user may hold.
const MaxKeys = 20

// Key and secret prefixes make them recognisable (in logs, in secret scanners).
const (
	keyPrefix    = "dk_"
	secretPrefix = "dks_"
)

// More errors of the package.
var (
	// ErrBadKey is the one answer to an unknown key, a revoked key and a
	// wrong secret.
	ErrBadKey = fault.New(fault.Unauthorized, "invalid API key or secret")
	// ErrTooManyKeys refuses a key past MaxKeys.
	ErrTooManyKeys = fault.New(fault.Conflict, "at most %d live keys per user; revoke one first", MaxKeys)
	// ErrKeyNotFound is a key the user does not hold (or none at all).
	ErrKeyNotFound = fault.New(fault.NotFound, "no such key")
)

// NewKey is a key just made: the only time its secret is known.
type NewKey struct {
	models.APIKey
	Secret string
}

// CreateKey makes a developer key for u.
func (s *Service) CreateKey(ctx context.Context, u models.User, name string) (NewKey, error) {
	name = strings.TrimSpace(name)
	if len(name) > 100 {
		return NewKey{}, fault.Invalid("name", "must be at most 100 characters")
	}
	if name == "" {
		name = "key"
	}
	k := NewKey{Secret: secretPrefix + secret.New()}
	k.APIKey = models.APIKey{ID: secret.NewID(keyPrefix), UserID: u.ID, Name: name,
		SecretHash: secret.Hash(k.Secret), CreatedAt: s.now().UTC()}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The user's row lock serializes their new keys, so that two
		// requests cannot both take the last slot.
		if err := models.ForUpdate(tx).Select("id").Take(&models.User{}, "id = ?", u.ID).Error; err != nil {
			return fmt.Errorf("lock user %s: %w", u.ID, err)
		}
		var live int64
		if err := tx.Model(&models.APIKey{}).Where("user_id = ? AND revoked_at IS NULL", u.ID).Count(&live).Error; err != nil {
			return err
		}
		if live >= MaxKeys {
			return ErrTooManyKeys
		}
		return tx.Create(&k.APIKey).Error
	})
	if err != nil {
		return NewKey{}, fmt.Errorf("create key: %w", err)
	}
	return k, nil
}

// Keys lists u's live keys, newest first.
func (s *Service) Keys(ctx context.Context, u models.User) ([]models.APIKey, error) {
	var keys []models.APIKey
	err := s.db.WithContext(ctx).Where("user_id = ? AND revoked_at IS NULL", u.ID).Order("created_at DESC, id").Find(&keys).Error
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return keys, nil
}

// RevokeKey revokes u's key id; another user's key is ErrKeyNotFound.
func (s *Service) RevokeKey(ctx context.Context, u models.User, id string) error {
	res := s.db.WithContext(ctx).Model(&models.APIKey{}).
		Where("id = ? AND user_id = ? AND revoked_at IS NULL", id, u.ID).Update("revoked_at", s.now().UTC())
	if res.Error != nil {
		return fmt.Errorf("revoke key: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrKeyNotFound
	}
	return nil
}

// dummySecretHash is compared when a key is unknown, so that an unknown key
// costs what a wrong secret costs.
var dummySecretHash = secret.Hash("no key has this secret")

// KeyOwner returns the live key id with secret sec, or ErrBadKey (an id
// that is not UTF-8, as a header may be, is no key's).
func (s *Service) KeyOwner(ctx context.Context, id, sec string) (models.APIKey, error) {
	if !models.Storable(id) {
		return models.APIKey{}, ErrBadKey
	}
	var k models.APIKey
	err := s.db.WithContext(ctx).Where("id = ? AND revoked_at IS NULL", id).Take(&k).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		k.SecretHash = dummySecretHash
	case err != nil:
		return models.APIKey{}, fmt.Errorf("find key: %w", err)
	}
	if !hmac.Equal([]byte(secret.Hash(sec)), []byte(k.SecretHash)) || err != nil {
		return models.APIKey{}, ErrBadKey
	}
	return k, nil
}

// TouchKey records that key id was used now, at most once a minute.
func (s *Service) TouchKey(ctx context.Context, id string) error {
	return s.uses.Touch(ctx, id)
}
