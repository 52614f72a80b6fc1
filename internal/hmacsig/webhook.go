package hmacsig

import "crypto/hmac"

// WebhookSignature is the X-Service-Signature of a webhook delivery: the
// lowercase hex HMAC-SHA256 of the raw body keyed with the endpoint's
// signing secret, with no version prefix.
func WebhookSignature(secret, body []byte) string {
	return hmacHex(secret, body)
}

// VerifyWebhook reports whether signature is WebhookSignature(secret, body),
// comparing in constant time. Only lowercase hex matches.
func VerifyWebhook(secret, body []byte, signature string) bool {
	return hmac.Equal([]byte(signature), []byte(WebhookSignature(secret, body)))
}
