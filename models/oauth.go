package models

import "time"

// OAuthClient is a public client registered through RFC 7591: no secret,
// PKCE is what binds its codes to it.
type OAuthClient struct {
	ID           string   `gorm:"primaryKey;size:40"`
	Name         string   `gorm:"size:200;not null"`
	RedirectURIs []string `gorm:"serializer:json;not null"`
	CreatedAt    time.Time
	// UsedAt is when a person first authorized the client; registrations
	// never used are pruned after a day.
	UsedAt *time.Time
}

// OAuthCode is an authorization code (RFC 6749 §4.1), stored as the SHA-256
// of the code. It is single use (UsedAt) and short-lived. It is also the
// root of the token family issued from it: RevokedAt set revokes every
// token of the family, those a concurrent refresh is issuing included.
type OAuthCode struct {
	Hash          string `gorm:"primaryKey;size:64"`
	ClientID      string `gorm:"size:40;not null"`
	UserID        string `gorm:"size:36;not null"`
	RedirectURI   string `gorm:"size:2000;not null"`
	CodeChallenge string `gorm:"size:128;not null"`
	Scope         string `gorm:"size:200;not null"`
	// Resource is the resource (RFC 8707) the grant is for, "" when the
	// request named none.
	Resource  string `gorm:"size:2000;not null;default:''"`
	ExpiresAt time.Time
	UsedAt    *time.Time
	RevokedAt *time.Time
	CreatedAt time.Time
}

// The kinds of OAuthToken.
const (
	TokenAccess  = "access"
	TokenRefresh = "refresh"
)

// OAuthToken is an access or refresh token, stored as the SHA-256 of the
// token. Family is the grant it descends from (the code's hash): reuse of a
// spent code or refresh token revokes the whole family. A refresh token is
// spent (UsedAt) when it is rotated.
type OAuthToken struct {
	Hash     string `gorm:"primaryKey;size:64"`
	Kind     string `gorm:"size:8;not null"`
	Family   string `gorm:"size:64;not null;index"`
	ClientID string `gorm:"size:40;not null"`
	UserID   string `gorm:"size:36;not null;index"`
	Scope    string `gorm:"size:200;not null"`
	// Resource is where the token is good (RFC 8707): "" for anywhere
	// the service takes bearer tokens.
	Resource  string    `gorm:"size:2000;not null;default:''"`
	ExpiresAt time.Time `gorm:"index"`
	UsedAt    *time.Time
	RevokedAt *time.Time
	CreatedAt time.Time
}

// TableName keeps the table name readable (gorm would say o_auth_clients).
func (OAuthClient) TableName() string { return "oauth_clients" }

// TableName keeps the table name readable.
func (OAuthCode) TableName() string { return "oauth_codes" }

// TableName keeps the table name readable.
func (OAuthToken) TableName() string { return "oauth_tokens" }
