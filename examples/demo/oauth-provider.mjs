#!/usr/bin/env node
// DEMO ONLY — not part of svc, never used by the product. A tiny OAuth 2.0 authorization server
// with a JSON API behind it, on loopback, so that installing a connector through OAuth (the
// marketplace's install → authorize → callback → invoke) can be tried on a laptop with no internet.
// Its connector definition is examples/connectors/demo-oauth.json.
//
//   node examples/demo/oauth-provider.mjs [port]        (default 11436; listens on 127.0.0.1 only)
//
// Then start svc with the example connectors and this port allowed:
//   SVC_CONNECTORS_DIR=examples/connectors SVC_OUTBOUND_ALLOW=127.0.0.1:11436 npm start
//
// What makes it a demo, not a provider: there is no sign-in and no consent screen — every
// authorization request from its one client is granted at once, as "demo-user" (so a script, or
// curl following the redirect, can play the browser); it accepts any redirect URI on a loopback
// host; tokens live in memory and die with the process. What it does check, as a real provider
// does: the client and its secret, PKCE S256, single-use codes bound to their redirect URI,
// refresh tokens that rotate, RFC 7009 revocation, RFC 9207 `iss` on the authorization answer
// (advertised in its RFC 8414 metadata), and the bearer token on every API call.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const port = Number(process.argv[2] || process.env.DEMO_OAUTH_PORT || 11436);
const issuer = `http://127.0.0.1:${port}`;
const CLIENT_ID = "svc-demo";
// Not a secret: it is printed in the connector definition beside it. A demo.
const CLIENT_SECRET = "demo-client-secret-not-a-secret";
const SCOPES = ["read", "write"];
const ACCESS_TTL_S = 3600;

const codes = new Map(); // code → {redirectUri, challenge, scope, expiresAt}
const accessTokens = new Map(); // token → {scope, expiresAt}
const refreshTokens = new Map(); // token → {scope}
const token = () => randomBytes(24).toString("base64url");
const sameText = (a, b) => {
  const x = Buffer.from(String(a ?? ""));
  const y = Buffer.from(String(b ?? ""));
  return x.length === y.length && timingSafeEqual(x, y);
};
const loopbackRedirect = (uri) => {
  try {
    const u = new URL(uri);
    return ["http:", "https:"].includes(u.protocol) && ["localhost", "127.0.0.1", "[::1]"].includes(u.hostname);
  } catch {
    return false;
  }
};

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", issuer);
  const json = (status, value, headers = {}) =>
    res
      .writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers })
      .end(JSON.stringify(value));
  let raw = "";
  for await (const chunk of req) raw += chunk;
  const form = new URLSearchParams(
    req.headers["content-type"]?.startsWith("application/x-www-form-urlencoded") ? raw : "",
  );

  if (req.method === "GET" && url.pathname === "/.well-known/oauth-authorization-server")
    return json(200, {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      revocation_endpoint: `${issuer}/revoke`,
      scopes_supported: SCOPES,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic"],
      authorization_response_iss_parameter_supported: true,
    });

  if (req.method === "GET" && url.pathname === "/authorize") {
    const q = url.searchParams;
    const redirectUri = q.get("redirect_uri") ?? "";
    // Errors that cannot be sent back to a redirect URI are shown here (RFC 6749 §4.1.2.1).
    if (q.get("client_id") !== CLIENT_ID)
      return json(400, { error: "invalid_client", error_description: "unknown client_id" });
    if (!loopbackRedirect(redirectUri))
      return json(400, {
        error: "invalid_request",
        error_description: "the demo accepts redirect URIs on loopback only",
      });
    const back = new URL(redirectUri);
    back.searchParams.set("iss", issuer);
    if (q.get("state")) back.searchParams.set("state", q.get("state"));
    const scope = (q.get("scope") ?? "").split(/[ ,]+/).filter((s) => SCOPES.includes(s));
    if (q.get("response_type") !== "code") back.searchParams.set("error", "unsupported_response_type");
    else if (q.get("code_challenge_method") !== "S256" || !q.get("code_challenge")) {
      back.searchParams.set("error", "invalid_request");
      back.searchParams.set("error_description", "PKCE S256 is required");
    } else {
      // Granted at once, no screen: the demo's one simplification a real provider never makes.
      const code = token();
      codes.set(code, { redirectUri, challenge: q.get("code_challenge"), scope, expiresAt: Date.now() + 60_000 });
      back.searchParams.set("code", code);
    }
    console.log(`authorize: granted ${scope.join(" ") || "(no scope)"} to ${CLIENT_ID}, back to ${back.origin}`);
    return res.writeHead(302, { location: back.toString(), "cache-control": "no-store" }).end();
  }

  if (req.method === "POST" && url.pathname === "/token") {
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const [id, secret] = basic
      ? Buffer.from(basic, "base64").toString().split(":").map(decodeURIComponent)
      : [form.get("client_id"), form.get("client_secret")];
    if (id !== CLIENT_ID || !sameText(secret, CLIENT_SECRET))
      return json(401, { error: "invalid_client" }, { "www-authenticate": 'Basic realm="demo"' });
    let scope;
    if (form.get("grant_type") === "authorization_code") {
      const grant = codes.get(form.get("code") ?? "");
      codes.delete(form.get("code") ?? ""); // single use, whatever follows
      const verifier = form.get("code_verifier") ?? "";
      const challenge = createHash("sha256").update(verifier).digest("base64url");
      if (!grant || grant.expiresAt < Date.now() || grant.redirectUri !== form.get("redirect_uri"))
        return json(400, {
          error: "invalid_grant",
          error_description: "unknown, used or expired code, or another redirect_uri",
        });
      if (!sameText(challenge, grant.challenge))
        return json(400, { error: "invalid_grant", error_description: "the PKCE verifier does not match" });
      scope = grant.scope;
    } else if (form.get("grant_type") === "refresh_token") {
      const held = refreshTokens.get(form.get("refresh_token") ?? "");
      if (!held) return json(400, { error: "invalid_grant", error_description: "unknown or revoked refresh token" });
      refreshTokens.delete(form.get("refresh_token")); // each refresh rotates it
      scope = held.scope;
    } else return json(400, { error: "unsupported_grant_type" });
    const access = token();
    const refresh = token();
    accessTokens.set(access, { scope, expiresAt: Date.now() + ACCESS_TTL_S * 1000 });
    refreshTokens.set(refresh, { scope });
    console.log(`token: ${form.get("grant_type")} → a new access token (${scope.join(" ")})`);
    return json(200, {
      access_token: access,
      token_type: "Bearer",
      expires_in: ACCESS_TTL_S,
      refresh_token: refresh,
      scope: scope.join(" "),
    });
  }

  if (req.method === "POST" && url.pathname === "/revoke") {
    // RFC 7009 §2.2: 200 whether or not the token was known.
    accessTokens.delete(form.get("token") ?? "");
    refreshTokens.delete(form.get("token") ?? "");
    return json(200, {});
  }

  if (url.pathname === "/api" || url.pathname.startsWith("/api/")) {
    if (url.pathname === "/api" && req.method === "GET") return json(200, { status: "ok" }); // the health check's probe
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const held = bearer && accessTokens.get(bearer);
    if (!held || held.expiresAt < Date.now())
      return json(401, { error: "invalid_token" }, { "www-authenticate": 'Bearer error="invalid_token"' });
    if (req.method === "GET" && url.pathname === "/api/me")
      return json(200, { user: "demo-user", scope: held.scope.join(" ") });
    if (req.method === "POST" && url.pathname === "/api/echo") {
      if (!held.scope.includes("write")) return json(403, { error: "insufficient_scope", scope: "write" });
      let body = null;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        return json(400, { error: "the body is not JSON" });
      }
      return json(200, { echoed: body, user: "demo-user" });
    }
    return json(404, { error: "the demo API answers GET /api/me and POST /api/echo" });
  }
  json(404, { error: "not found" });
});

server.listen(port, "127.0.0.1", () =>
  console.log(
    [
      `demo OAuth provider on ${issuer} (a demo: it grants every authorization at once, as demo-user)`,
      `next: start svc with  SVC_CONNECTORS_DIR=examples/connectors SVC_OUTBOUND_ALLOW=127.0.0.1:${port} npm start`,
      `      then install the connector "demo-oauth" (Marketplace, or POST /v1/marketplace/connectors/demo-oauth/install)`,
    ].join("\n"),
  ),
);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
