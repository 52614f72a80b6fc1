package hmacsig

import (
	"strings"
	"testing"

	"github.com/domaind/domaind/internal/hmacsig/hmacsigtest"
)

func TestWebhookVectors(t *testing.T) {
	for _, v := range hmacsigtest.Load(t).Webhooks {
		t.Run(v.Name, func(t *testing.T) {
			if got := WebhookSignature([]byte(v.Secret), []byte(v.Body)); got != v.Signature {
				t.Errorf("WebhookSignature = %q; want %q", got, v.Signature)
			}
			if !VerifyWebhook([]byte(v.Secret), []byte(v.Body), v.Signature) {
				t.Error("VerifyWebhook refuses the vector's signature")
			}
		})
	}
}

func TestVerifyWebhookRefuses(t *testing.T) {
	secret, body := []byte("whsec_partner_1"), []byte(`{"id":"evt_1"}`)
	good := WebhookSignature(secret, body)
	tests := []struct{ name, body, signature string }{
		{"empty", string(body), ""},
		{"upper case", string(body), strings.ToUpper(good)},
		{"v1 prefix", string(body), "v1=" + good},
		{"sha256 prefix", string(body), "sha256=" + good},
		{"truncated", string(body), good[:63]},
		{"other body", `{"id":"evt_2"}`, good},
		{"other secret", string(body), WebhookSignature([]byte("whsec_other"), body)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if VerifyWebhook(secret, []byte(tt.body), tt.signature) {
				t.Errorf("VerifyWebhook(%q, %q) = true", tt.body, tt.signature)
			}
		})
	}
}
