package stripepay

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// signatureTolerance is how far a notice's timestamp may be from now:
// a notice replayed later than this is refused, as Stripe's libraries do.
const signatureTolerance = 5 * time.Minute

// verifySignature checks the Stripe-Signature header of payload: a
// timestamp t and one or more v1 signatures, each the hex HMAC-SHA256,
// under the endpoint's secret, of the timestamp, a dot and the payload.
// One v1 that matches is enough (Stripe signs with the old secret and the
// new one while a secret is being rolled).
func verifySignature(payload []byte, header, secret string, now time.Time) error {
	var ts int64 = -1
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return errors.New("the signature's timestamp is not a number")
			}
			ts = n
		case "v1":
			if sig, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, sig)
			}
		}
	}
	switch {
	case ts < 0:
		return errors.New("the signature has no timestamp")
	case len(sigs) == 0:
		return errors.New("the signature has no v1 signature")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > signatureTolerance || d < -signatureTolerance {
		return errors.New("the signature's timestamp is too far from now")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(ts, 10)))
	mac.Write([]byte("."))
	mac.Write(payload)
	want := mac.Sum(nil)
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			return nil
		}
	}
	return errors.New("no signature matches the payload")
}
