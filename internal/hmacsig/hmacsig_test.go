package hmacsig

import (
	"errors"
	"strings"
	"testing"

	"github.com/domaind/domaind/internal/hmacsig/hmacsigtest"
)

func TestCanonicalQueryVectors(t *testing.T) {
	for _, v := range hmacsigtest.Load(t).Queries {
		t.Run(v.Name, func(t *testing.T) {
			got, err := CanonicalQuery(v.Raw)
			if v.Canonical == nil {
				if !errors.Is(err, ErrBadQuery) {
					t.Errorf("CanonicalQuery(%q) = %q, %v; want an error wrapping ErrBadQuery", v.Raw, got, err)
				}
				return
			}
			if err != nil || got != *v.Canonical {
				t.Errorf("CanonicalQuery(%q) = %q, %v; want %q", v.Raw, got, err, *v.Canonical)
			}
		})
	}
}

func TestRequestVectors(t *testing.T) {
	for _, v := range hmacsigtest.Load(t).Requests {
		t.Run(v.Name, func(t *testing.T) {
			q, err := CanonicalQuery(v.Query)
			if err != nil || q != v.CanonicalQuery {
				t.Fatalf("CanonicalQuery(%q) = %q, %v; want %q", v.Query, q, err, v.CanonicalQuery)
			}
			cs := CanonicalString(v.Method, v.Path, q, v.Timestamp, v.Nonce, []byte(v.Body))
			if cs != v.CanonicalString {
				t.Fatalf("CanonicalString = %q; want %q", cs, v.CanonicalString)
			}
			if got := Sign([]byte(v.Secret), cs); got != v.Signature {
				t.Errorf("Sign = %q; want %q", got, v.Signature)
			}
			if !Verify([]byte(v.Secret), cs, v.Signature) {
				t.Errorf("Verify refuses the vector's signature")
			}
		})
	}
}

func TestVerifyRefuses(t *testing.T) {
	secret := []byte("sk_test_51c0ffee")
	canonical := CanonicalString("GET", "/api/partner/v1/pricing", "domain=example.com", "1767225600", "n-1", nil)
	good := Sign(secret, canonical)
	tests := []struct {
		name, canonical, signature string
		want                       string // in the error
	}{
		{"empty", canonical, "", "want \"v1=\""},
		{"no prefix", canonical, strings.TrimPrefix(good, "v1="), "want \"v1=\""},
		{"other version", canonical, "v2=" + strings.TrimPrefix(good, "v1="), "want \"v1=\""},
		{"prefix in upper case", canonical, "V1=" + strings.TrimPrefix(good, "v1="), "want \"v1=\""},
		{"hex in upper case", canonical, "v1=" + strings.ToUpper(strings.TrimPrefix(good, "v1=")), "want \"v1=\""},
		{"63 digits", canonical, good[:len(good)-1], "want \"v1=\""},
		{"65 digits", canonical, good + "0", "want \"v1=\""},
		{"trailing space", canonical, good + " ", "want \"v1=\""},
		{"other secret", canonical, Sign([]byte("sk_test_other"), canonical), "does not match"},
		{"other canonical string", strings.Replace(canonical, "example.com", "example.net", 1), good, "does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSignature(secret, tt.canonical, tt.signature)
			if !errors.Is(err, ErrBadSignature) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckSignature(%q) = %v; want ErrBadSignature saying %q", tt.signature, err, tt.want)
			}
			if Verify(secret, tt.canonical, tt.signature) {
				t.Errorf("Verify(%q) = true", tt.signature)
			}
		})
	}
	if err := CheckSignature(secret, canonical, good); err != nil {
		t.Errorf("CheckSignature(good) = %v", err)
	}
}

func TestCanonicalStringHashesTheBody(t *testing.T) {
	const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"nil body", nil, emptySHA256},
		{"empty body", []byte{}, emptySHA256},
		{"abc", []byte("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := strings.Split(CanonicalString("post", "/p", "", "1", "n", tt.body), "\n")
			if len(lines) != 6 || lines[0] != "POST" || lines[5] != tt.want {
				t.Errorf("lines = %q; want 6 lines, POST first, %s last", lines, tt.want)
			}
		})
	}
}
