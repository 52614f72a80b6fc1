// Package password hashes and verifies account passwords with argon2id
// (RFC 9106), in the PHC string format
// "$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>" so that the parameters
// travel with each hash and can be raised later without breaking old ones.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id's cost parameters.
type Params struct {
	MemoryKiB uint32
	Time      uint32
	Threads   uint8
}

// Default is OWASP's minimum recommendation for argon2id (19 MiB, two
// passes, one lane): about 30 ms on one core of a small server.
var Default = Params{MemoryKiB: 19 * 1024, Time: 2, Threads: 1}

const (
	saltLen = 16
	keyLen  = 32
	// MinLength and MaxLength bound a password in bytes; the maximum keeps
	// a hostile request from making the server hash megabytes.
	MinLength = 10
	MaxLength = 1024
)

// ErrMismatch is returned by Verify for a wrong password.
var ErrMismatch = errors.New("password: mismatch")

var b64 = base64.RawStdEncoding

// Hash returns the PHC string of password with p, under a random salt.
func Hash(password string, p Params) string {
	salt := make([]byte, saltLen)
	rand.Read(salt) // never fails (crypto/rand crashes the program rather than return an error)
	key := argon2.IDKey([]byte(password), salt, p.Time, p.MemoryKiB, p.Threads, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.MemoryKiB, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// Verify reports whether password matches the PHC string encoded: nil, or
// ErrMismatch, or an error for a string this package did not make.
func Verify(password, encoded string) error {
	p, salt, want, err := decode(encoded)
	if err != nil {
		return err
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.MemoryKiB, p.Threads, uint32(len(want)))
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return ErrMismatch
	}
	return nil
}

func decode(encoded string) (p Params, salt, key []byte, err error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return p, nil, nil, errors.New("password: not an argon2id hash")
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return p, nil, nil, fmt.Errorf("password: unsupported argon2 version %q", parts[2])
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Time, &p.Threads); err != nil ||
		p.MemoryKiB == 0 || p.Time == 0 || p.Threads == 0 {
		return p, nil, nil, fmt.Errorf("password: bad parameters %q", parts[3])
	}
	if salt, err = b64.DecodeString(parts[4]); err != nil {
		return p, nil, nil, fmt.Errorf("password: bad salt: %w", err)
	}
	if key, err = b64.DecodeString(parts[5]); err != nil || len(key) == 0 {
		return p, nil, nil, fmt.Errorf("password: bad hash: %w", err)
	}
	return p, salt, key, nil
}
