package signedtoken

import (
	"errors"
	"strings"
	"testing"
)

type claims struct {
	ID    string `json:"id"`
	Cents int64  `json:"cents"`
}

func TestSignAndOpen(t *testing.T) {
	key := []byte("test-secret-key-0123456789abcdef")
	s := New(key, "quotes", "qt1.")
	tok, err := s.Sign(claims{ID: "qt_1", Cents: 1200})
	if err != nil || !strings.HasPrefix(tok, "qt1.") {
		t.Fatalf("Sign = %q, %v", tok, err)
	}
	var got claims
	if err := s.Open(tok, &got); err != nil || got != (claims{"qt_1", 1200}) {
		t.Fatalf("Open = %+v, %v", got, err)
	}
	payload, sig, _ := strings.Cut(strings.TrimPrefix(tok, "qt1."), ".")
	forged, _ := New(key, "quotes", "qt1.").Sign(claims{ID: "qt_1", Cents: 1})
	for name, bad := range map[string]string{
		"empty":             "",
		"no prefix":         strings.TrimPrefix(tok, "qt1."),
		"other prefix":      "pt1." + payload + "." + sig,
		"changed signature": tok[:len(tok)-1] + map[bool]string{true: "B", false: "A"}[strings.HasSuffix(tok, "A")],
		"changed claims":    "qt1." + strings.Split(strings.TrimPrefix(forged, "qt1."), ".")[0] + "." + sig,
		"no signature":      "qt1." + payload,
		"too long":          tok + strings.Repeat("A", MaxLen),
		"other purpose":     mustSign(t, New(key, "checkout", "qt1."), claims{ID: "qt_1", Cents: 1200}),
		"other key":         mustSign(t, New([]byte("another-secret-key-0123456789abc"), "quotes", "qt1."), claims{ID: "qt_1", Cents: 1200}),
	} {
		if err := s.Open(bad, &got); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Open = %v, want ErrInvalid", name, err)
		}
	}
}

func mustSign(t *testing.T, s *Signer, c claims) string {
	t.Helper()
	tok, err := s.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
