// Drives the MCP TypeScript SDK's own client through domaind's /mcp as an
// agent would: the 401 challenge, discovery, dynamic registration, the
// person's consent (asked of the Go test's consent helper, which approves
// in a signed-in browser and answers the authorization code), the token,
// then tools/list and two tool calls. It prints one JSON line for the test.
//
//   node client.mjs <base URL> <consent helper URL>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [base, consentHelper] = process.argv.slice(2);
const redirectUrl = "http://127.0.0.1:1/callback";

// An in-memory OAuth client provider: what a desktop agent keeps on disk.
class Provider {
  constructor() { this.saved = {}; }
  get redirectUrl() { return redirectUrl; }
  get clientMetadata() {
    return { client_name: "Price Watcher", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  state() { return crypto.randomUUID(); } // the service requires a state
  clientInformation() { return this.saved.client; }
  saveClientInformation(info) { this.saved.client = info; }
  tokens() { return this.saved.tokens; }
  saveTokens(tokens) { this.saved.tokens = tokens; }
  redirectToAuthorization(url) { this.authorizationUrl = url; }
  saveCodeVerifier(v) { this.saved.verifier = v; }
  codeVerifier() { return this.saved.verifier; }
}

const provider = new Provider();
const endpoint = new URL(base + "/mcp");
const client = new Client({ name: "ts-agent", version: "1.0.0" });
let transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
try {
  await client.connect(transport);
  throw new Error("connected without authorization");
} catch (e) {
  if (!(e instanceof UnauthorizedError) || !provider.authorizationUrl) throw e;
}
const answer = await fetch(consentHelper, { method: "POST", body: provider.authorizationUrl.toString() });
if (!answer.ok) throw new Error("consent helper: " + answer.status + " " + (await answer.text()));
await transport.finishAuth(await answer.text());
transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
await client.connect(transport);

const tools = await client.listTools();
const price = await client.callTool({ name: "tld_pricing", arguments: { tld: "com", op: "register" } });
const bad = await client.callTool({ name: "tld_pricing", arguments: { tld: "com", op: "buy" } });
console.log(JSON.stringify({
  tools: tools.tools.map((t) => t.name).sort(),
  price: price.structuredContent,
  bad: { isError: bad.isError, text: bad.content?.[0]?.text },
}));
await client.close();
