package oauth

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
)

// Access is what a person has allowed one client: its live grants, those
// with a refresh token still good, together.
type Access struct {
	ClientID, ClientName string
	// Scope is what the client's newest token may do, space-separated (a
	// refresh may have narrowed it from what the person granted).
	Scope string
	// Since is the consent of the oldest live grant; Ends is when the last
	// one ends (GrantTTL after its consent).
	Since, Ends time.Time
	// LastUsed is when the client last took tokens, by a code or a refresh.
	LastUsed time.Time
}

// Allowed lists the clients userID has allowed and can still take tokens,
// the one used last first.
func (s *Server) Allowed(ctx context.Context, userID string) ([]Access, error) {
	now := s.now().UTC()
	db := s.db.WithContext(ctx)
	var live []models.OAuthToken
	err := db.Where("user_id = ? AND kind = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?", userID, models.TokenRefresh, now).
		Find(&live).Error
	if err != nil {
		return nil, fmt.Errorf("read refresh tokens: %w", err)
	}
	if len(live) == 0 {
		return nil, nil
	}
	families := make([]string, 0, len(live))
	for _, t := range live {
		families = append(families, t.Family)
	}
	var grants []models.OAuthCode
	if err := db.Where("hash IN ? AND revoked_at IS NULL AND created_at > ?", families, now.Add(-GrantTTL)).Find(&grants).Error; err != nil {
		return nil, fmt.Errorf("read grants: %w", err)
	}
	consent := make(map[string]time.Time, len(grants))
	for _, g := range grants {
		consent[g.Hash] = g.CreatedAt
	}
	byClient := map[string]*Access{}
	for _, t := range live {
		since, ok := consent[t.Family]
		if !ok { // revoked, or past its end
			continue
		}
		a := byClient[t.ClientID]
		if a == nil {
			a = &Access{ClientID: t.ClientID, Scope: t.Scope, Since: since, Ends: since.Add(GrantTTL), LastUsed: t.CreatedAt}
			byClient[t.ClientID] = a
		}
		if since.Before(a.Since) {
			a.Since = since
		}
		if end := since.Add(GrantTTL); end.After(a.Ends) {
			a.Ends = end
		}
		if t.CreatedAt.After(a.LastUsed) {
			a.LastUsed, a.Scope = t.CreatedAt, t.Scope
		}
	}
	if len(byClient) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(byClient))
	for id := range byClient {
		ids = append(ids, id)
	}
	var clients []models.OAuthClient
	if err := db.Where("id IN ?", ids).Find(&clients).Error; err != nil {
		return nil, fmt.Errorf("read clients: %w", err)
	}
	for _, c := range clients {
		byClient[c.ID].ClientName = c.Name
	}
	out := make([]Access, 0, len(byClient))
	for _, a := range byClient {
		out = append(out, *a)
	}
	slices.SortFunc(out, func(a, b Access) int {
		return cmp.Or(b.LastUsed.Compare(a.LastUsed), cmp.Compare(a.ClientID, b.ClientID))
	})
	return out, nil
}

// Disallow ends every grant userID gave clientID: the client's tokens
// stop working at once, and it must ask the person again. A client with
// no grant of the person's to end is NotFound.
func (s *Server) Disallow(ctx context.Context, userID, clientID string) error {
	now := s.now().UTC()
	ended := int64(0)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&models.OAuthCode{}).Where("user_id = ? AND client_id = ? AND revoked_at IS NULL", userID, clientID).Update("revoked_at", now)
		if res.Error != nil {
			return res.Error
		}
		ended = res.RowsAffected
		return tx.Model(&models.OAuthToken{}).Where("user_id = ? AND client_id = ? AND revoked_at IS NULL", userID, clientID).Update("revoked_at", now).Error
	})
	if err != nil {
		return fmt.Errorf("end grants: %w", err)
	}
	if ended == 0 {
		return fault.New(fault.NotFound, "no app of that id has access to your account")
	}
	return nil
}
