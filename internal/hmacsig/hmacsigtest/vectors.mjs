// vectors.mjs computes the signing vectors in vectors.json with node's own
// encodeURIComponent, decodeURIComponent and crypto, independently of the Go
// code the vectors test. Regenerate with (from the repository root):
//
//	node internal/hmacsig/hmacsigtest/vectors.mjs > internal/hmacsig/hmacsigtest/vectors.json
//
// The rules are those of the partner API's request signing: see the package
// documentation of internal/hmacsig.
import { createHash, createHmac } from "node:crypto";

// canonicalQuery: split on "&", drop empty pairs, split each pair at its first
// "=", read "+" as a space (application/x-www-form-urlencoded), percent-decode
// (decodeURIComponent throws on a malformed escape or bytes that are not
// UTF-8), sort by key then value in UTF-8 byte order, encode with
// encodeURIComponent plus ! ' ( ) *, join with "&". Returns null when the
// query cannot be decoded.
function canonicalQuery(raw) {
  const decode = (s) => decodeURIComponent(s.replace(/\+/g, " "));
  const encode = (s) =>
    encodeURIComponent(s).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
  const bytes = (s) => Buffer.from(s, "utf8");
  let pairs;
  try {
    pairs = raw
      .split("&")
      .filter((p) => p !== "")
      .map((p) => {
        const i = p.indexOf("=");
        return i < 0 ? [decode(p), ""] : [decode(p.slice(0, i)), decode(p.slice(i + 1))];
      });
  } catch (e) {
    if (e instanceof URIError) return null;
    throw e;
  }
  pairs.sort((a, b) => Buffer.compare(bytes(a[0]), bytes(b[0])) || Buffer.compare(bytes(a[1]), bytes(b[1])));
  return pairs.map(([k, v]) => encode(k) + "=" + encode(v)).join("&");
}

const sha256Hex = (s) => createHash("sha256").update(s, "utf8").digest("hex");
const hmacHex = (secret, s) => createHmac("sha256", Buffer.from(secret, "utf8")).update(s, "utf8").digest("hex");

const queries = [
  ["empty", ""],
  ["already sorted", "a=1&b=2&c=3"],
  ["unsorted", "c=3&a=1&b=2"],
  ["space as %20", "q=red%20car"],
  ["space as +", "q=red+car"],
  ["space in a key as +", "my+key=1"],
  ["literal plus as %2B", "q=c%2B%2B"],
  ["tilde stays", "q=~user"],
  ["encoded tilde is decoded", "q=%7Euser"],
  ["unreserved marks stay", "q=a-b_c.d"],
  ["! ' ( ) * are encoded", "q=!'()*"],
  ["lowercase escapes become uppercase", "q=%21%27%28%29%2a"],
  ["repeated key sorted by value", "tld=net&tld=com&tld=io"],
  ["key sorts before value", "a-b=1&a=2"],
  ["uppercase sorts before lowercase", "b=1&B=2&a=3"],
  ["sorted on decoded bytes, not encoded", "k=a%2F&k=a."],
  ["keys sorted on decoded bytes: z before é", "z=1&%C3%A9=2&a=3"],
  ["UTF-8 byte order, not UTF-16", "e=%F0%9F%98%80&e=%EF%BD%A1"],
  ["empty value", "b=&a=1"],
  ["key without =", "flag&a=1"],
  ["empty key", "=x&a=1"],
  ["empty pairs dropped", "&&a=1&&b=2&"],
  ["only the first = splits", "a=b=c"],
  ["raw UTF-8", "q=café"],
  ["encoded UTF-8", "q=caf%C3%A9"],
  ["snowman", "q=%E2%98%83"],
  ["snowman lowercase hex", "q=%e2%98%83"],
  ["reserved characters encoded", "q=%2F%3F%3A%40%26%3D%24%2C"],
  ["reserved characters raw", "path=/a/b:c@d$e,f?g"],
  ["encoded & stays in the value", "q=a%26b&r=1"],
  ["encoded key", "%61=1&%62%20c=2"],
  ["search with pagination", "q=red+car&limit=5&cursor=abc%3D%3D&tld=com&tld=ai"],
  ["malformed: lone %", "q=%"],
  ["malformed: short escape", "q=%4"],
  ["malformed: not hex", "q=%zz"],
  ["malformed: in a key", "%G1=1"],
  ["not UTF-8: lone byte", "q=%FF"],
  ["not UTF-8: truncated sequence", "q=%C3"],
  ["not UTF-8: encoded surrogate", "q=%ED%A0%80"],
  ["not UTF-8: overlong", "q=%C0%AF"],
].map(([name, raw]) => ({ name, raw, canonical: canonicalQuery(raw) }));

const requests = [
  {
    name: "search, unsorted query with + and repeated keys",
    secret: "sk_test_51c0ffee",
    method: "GET",
    path: "/api/partner/v1/domains/search",
    query: "tld=net&q=red+car&tld=com",
    timestamp: "1767225600",
    nonce: "3f1c9a52-7d4e-4b8a-9e21-5c6d7e8f9a0b",
    body: "",
  },
  {
    name: "availability of a UTF-8 name, lowercase method",
    secret: "sk_test_51c0ffee",
    method: "get",
    path: "/api/partner/v1/availability",
    query: "domain=caf%C3%A9.com",
    timestamp: "1767225601",
    nonce: "a7b8c9d0-1e2f-4a3b-8c4d-5e6f7a8b9c0d",
    body: "",
  },
  {
    name: "order with a JSON body and no query",
    secret: "sk_test_51c0ffee",
    method: "POST",
    path: "/api/partner/v1/orders",
    query: "",
    timestamp: "1767225602",
    nonce: "0d9e8f7a-6b5c-4d3e-a2f1-0a9b8c7d6e5f",
    body: '{"quote_id":"q_123","external_payment_ref":"pi_3Nc!x(1)"}',
  },
  {
    name: "webhook registration with a UTF-8 secret and body",
    secret: "clé-secrète-☃",
    method: "PUT",
    path: "/api/partner/webhooks",
    query: "",
    timestamp: "1767225603",
    nonce: "5b6c7d8e-9f0a-4b1c-9d2e-3f4a5b6c7d8e",
    body: '{"url":"https://partner.example/hooks/domaind","secret":"whsec_café"}',
  },
  {
    name: "reserved characters and ! ' ( ) * in the query",
    secret: "sk_live_9f8e7d6c",
    method: "GET",
    path: "/api/partner/v1/orders",
    query: "status=EXTERNALLY_PAID&domain=a(b)!c*d'e.com&after=2026-01-01T00:00:00Z",
    timestamp: "1767225604",
    nonce: "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
    body: "",
  },
].map((r) => {
  const canonical = [
    r.method.toUpperCase(),
    r.path,
    canonicalQuery(r.query),
    r.timestamp,
    r.nonce,
    sha256Hex(r.body),
  ].join("\n");
  return { ...r, canonical_query: canonicalQuery(r.query), canonical_string: canonical, signature: "v1=" + hmacHex(r.secret, canonical) };
});

const webhooks = [
  {
    name: "order.recorded",
    secret: "whsec_partner_1",
    body: '{"id":"evt_1","type":"order.recorded","created_at":"2026-01-01T00:00:00Z","partner_id":"ptn_1","data":{"order":{"public_id":"ord_1"}}}',
  },
  { name: "empty body", secret: "whsec_partner_1", body: "" },
  { name: "UTF-8 secret and body", secret: "clé-☃", body: '{"domain":"café.com"}' },
].map((w) => ({ ...w, signature: hmacHex(w.secret, w.body) }));

const out = {
  comment:
    "Generated by node internal/hmacsig/hmacsigtest/vectors.mjs; do not edit. canonical is null where the query must be refused.",
  queries,
  requests,
  webhooks,
};
process.stdout.write(JSON.stringify(out, null, 2) + "\n");
