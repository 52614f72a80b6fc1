package password

import (
	"errors"
	"strings"
	"testing"
)

// cheap keeps the tests fast; the format and checks are the same.
var cheap = Params{MemoryKiB: 64, Time: 1, Threads: 1}

func TestHashAndVerify(t *testing.T) {
	h := Hash("correct horse battery", cheap)
	if !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") || strings.Contains(h, "correct") {
		t.Fatalf("hash = %q", h)
	}
	if err := Verify("correct horse battery", h); err != nil {
		t.Errorf("right password: %v", err)
	}
	for _, wrong := range []string{"correct horse batterY", "", "correct horse battery "} {
		if err := Verify(wrong, h); !errors.Is(err, ErrMismatch) {
			t.Errorf("Verify(%q) = %v, want ErrMismatch", wrong, err)
		}
	}
	again := Hash("correct horse battery", cheap)
	if again == h {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
}

func TestVerifyUsesTheParametersOfTheHash(t *testing.T) {
	h := Hash("pw-0123456789", Params{MemoryKiB: 128, Time: 2, Threads: 2})
	if err := Verify("pw-0123456789", h); err != nil {
		t.Errorf("a hash made with other parameters does not verify: %v", err)
	}
}

func TestVerifyRefusesForeignStrings(t *testing.T) {
	for _, s := range []string{
		"", "plain", "$2a$12$abcdefghijklmnopqrstuv", // bcrypt
		"$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaA",
		"$argon2id$v=18$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaA",
		"$argon2id$v=19$m=0,t=1,p=1$c2FsdHNhbHQ$aGFzaA",
		"$argon2id$v=19$m=64,t=1,p=1$!!$aGFzaA",
		"$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$",
	} {
		if err := Verify("x", s); err == nil || errors.Is(err, ErrMismatch) {
			t.Errorf("Verify(%q) = %v, want a format error", s, err)
		}
	}
}
