package partnerclient

import (
	"testing"

	"github.com/domaind/domaind/internal/hmacsig/hmacsigtest"
)

func TestVerifyVectors(t *testing.T) {
	for _, v := range hmacsigtest.Load(t).Webhooks {
		t.Run(v.Name, func(t *testing.T) {
			if !Verify([]byte(v.Body), v.Signature, v.Secret) {
				t.Error("Verify refuses the vector's signature")
			}
			if Verify([]byte(v.Body+" "), v.Signature, v.Secret) {
				t.Error("Verify accepts a changed body")
			}
			if Verify([]byte(v.Body), v.Signature, v.Secret+"x") {
				t.Error("Verify accepts another secret")
			}
		})
	}
}
