#!/bin/sh
# partner-curl.sh METHOD PATH [QUERY] [BODY]: one signed partner API request
# with curl and openssl (SPEC §5.5's v1 signature).
#
#   DOMAIND_KEY_ID=pk_test_… DOMAIND_SECRET=sk_… \
#     docs/examples/partner-curl.sh GET /api/partner/v1/domains/search 'q=cheap%20flights'
#
# QUERY is sent as given and must already be canonical: pairs sorted by key,
# then value, each encoded as JavaScript's encodeURIComponent does, with
# ! ' ( ) * as %21 %27 %28 %29 %2A (a space is %20, never +). BODY is sent
# byte for byte as JSON. DOMAIND_URL defaults to http://localhost:8080.
# IDEMPOTENCY_KEY, when set, is sent as the Idempotency-Key header (an
# order needs one; the same key and body replay the first answer):
#
#   IDEMPOTENCY_KEY=order-1 docs/examples/partner-curl.sh POST /api/partner/v1/orders '' '{…}'
#
# The secret is an argument of openssl here, visible to other users of the
# machine: fine for the sandbox, use partnerclient (Go) or your own code in
# production.
set -eu
method=$1 path=$2 query=${3:-} body=${4:-}
ts=$(date +%s)
nonce=$(openssl rand -hex 16)
body_hash=$(printf '%s' "$body" | openssl dgst -sha256 -r | cut -d' ' -f1)
signature=$(printf '%s\n%s\n%s\n%s\n%s\n%s' "$method" "$path" "$query" "$ts" "$nonce" "$body_hash" |
	openssl dgst -sha256 -hmac "$DOMAIND_SECRET" -r | cut -d' ' -f1)
url=${DOMAIND_URL:-http://localhost:8080}$path${query:+?$query}
set --
if [ -n "$body" ]; then
	set -- -H 'Content-Type: application/json' --data-binary "$body"
fi
if [ -n "${IDEMPOTENCY_KEY:-}" ]; then
	set -- "$@" -H "Idempotency-Key: $IDEMPOTENCY_KEY"
fi
exec curl -sS -X "$method" "$url" \
	-H "X-Service-Key-Id: $DOMAIND_KEY_ID" -H "X-Service-Timestamp: $ts" \
	-H "X-Service-Nonce: $nonce" -H "X-Service-Signature: v1=$signature" "$@"
