// The whole OAuth flow as a strict client makes it, with oauth4webapi:
// the 401 challenge, RFC 9728 resource discovery (the metadata must name
// the resource the client called), RFC 8414 discovery (the issuer must be
// the one asked for), RFC 7591 registration, the person's sign-in and
// consent (done here with plain requests, as a browser would), the
// authorization response with RFC 9207's iss, the code exchange with PKCE
// and an RFC 8707 resource, and a call with the token.
//
// usage: node flow.mjs <base URL> <email> <password>; prints one JSON line.
import * as oauth from 'oauth4webapi'

const [base, email, password] = process.argv.slice(2)
const insecure = { [oauth.allowInsecureRequests]: true } // the test server is plain http on loopback
const api = new URL(base + '/api')
const step = (name) => (err) => { throw new Error(`${name}: ${err.message ?? err}`) }

// A call with a token the service does not know: oauth4webapi parses the
// 401 challenge itself and rejects with it.
const challenge = await oauth.protectedResourceRequest('at_unknown', 'GET', api, undefined, undefined, insecure)
  .then(() => { throw new Error('challenge: a call with an unknown token was answered') },
    (err) => { if (!(err instanceof oauth.WWWAuthenticateChallengeError)) throw err; return err.cause[0] })
if (challenge.scheme !== 'bearer' || challenge.parameters.error !== 'invalid_token' || !challenge.parameters.resource_metadata) {
  throw new Error(`challenge: ${JSON.stringify(challenge)}`)
}

const rs = await oauth.processResourceDiscoveryResponse(api, await oauth.resourceDiscoveryRequest(api, insecure)).catch(step('resource discovery'))
const issuer = new URL(rs.authorization_servers[0])
const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' })).catch(step('discovery'))

const redirectUri = 'http://127.0.0.1:9/callback'
const client = await oauth.processDynamicClientRegistrationResponse(
  await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [redirectUri], client_name: 'Strict Client', token_endpoint_auth_method: 'none' }, insecure),
).catch(step('registration'))

// The person signs in and consents, as a browser does.
const cookies = new Map()
const keep = (res) => { for (const c of res.headers.getSetCookie()) { const [pair] = c.split(';'); const [k, v] = pair.split('='); cookies.set(k, v) } }
const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ')
keep(await fetch(base + '/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) }))

const verifier = oauth.generateRandomCodeVerifier()
const state = oauth.generateRandomState()
const authURL = new URL(as.authorization_endpoint)
for (const [k, v] of Object.entries({
  client_id: client.client_id, redirect_uri: redirectUri, response_type: 'code', scope: 'pricing:read', state,
  code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', resource: api.href,
})) authURL.searchParams.set(k, v)
const page = await (await fetch(authURL, { headers: { cookie: cookieHeader() } })).text()
const form = new URLSearchParams({ decision: 'approve' })
for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) form.set(m[1], m[2].replaceAll('&amp;', '&').replaceAll('&#43;', '+').replaceAll('&#34;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>'))
const answered = await fetch(new URL('/oauth/authorize', base), { method: 'POST', redirect: 'manual', headers: { cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' }, body: form })
const callback = new URL(answered.headers.get('location') ?? 'http://missing/')

const params = oauth.validateAuthResponse(as, client, callback, state)
const tokens = await oauth.processAuthorizationCodeResponse(as, client,
  await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, { ...insecure, additionalParameters: { resource: api.href } }),
).catch(step('code exchange'))
const called = await oauth.protectedResourceRequest(tokens.access_token, 'GET', api, undefined, undefined, insecure)
console.log(JSON.stringify({ resource_metadata: challenge.parameters.resource_metadata, iss: callback.searchParams.get('iss'), scope: tokens.scope, api_status: called.status, body: await called.json() }))
