package partnerclient

import "github.com/domaind/domaind/internal/hmacsig"

// Verify reports whether signature, the X-Service-Signature header of a
// webhook delivery, is the lowercase hex HMAC-SHA256 of body under your
// endpoint's signing secret. Pass the raw body bytes exactly as received,
// before any JSON decoding; the comparison takes constant time. Refuse the
// delivery when it reports false. Deliveries may repeat: acknowledge with
// 200 within 5 seconds and process each event id once.
func Verify(body []byte, signature, secret string) bool {
	return hmacsig.VerifyWebhook([]byte(secret), body, signature)
}
