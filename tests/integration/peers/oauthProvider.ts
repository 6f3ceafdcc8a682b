import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type ClientLike } from "oidc-provider";

/**
 * A real OAuth 2.0 authorization server on loopback, for the marketplace's tests and the e2e
 * journey: `oidc-provider` (certified OpenID/OAuth implementation) with PKCE required, refresh
 * tokens that rotate, RFC 9207 `iss` on authorization responses, RFC 7009 revocation, and its
 * development login and consent screens (any login name is accepted). Beside it, under `/api`, a
 * small JSON API that checks the bearer token against the server's own token store, the way a
 * provider's API would: `GET /api/me` (who the token belongs to), `POST /api/echo` (the JSON body
 * back), `GET /api/big?mb=` (an answer of that many megabytes, to test caps).
 *
 * Use from a test:
 *
 *     const peer = await startOAuthProvider({ redirectUris: ["http://localhost:3000/v1/marketplace/oauth/callback"] });
 *     const landing = await peer.authorize(pendingInstall.oauth_authorization_url); // drives login + consent
 *     // landing: the redirect_uri with ?code=&state=&iss=
 *
 * From the shell (the e2e journey, a manual try): `npx tsx tests/integration/peers/startOAuthProvider.ts`
 * prints the issuer, client and a connector definition to put in SVC_CONNECTORS_DIR.
 */
export interface OAuthProviderOptions {
  /** Fixed port (e2e); 0 (default) picks one. */
  port?: number;
  redirectUris: string[];
  clientId?: string;
  clientSecret?: string;
  /** Access token lifetime in seconds (default 3600); short ones let a test see the worker refresh. */
  accessTokenTtl?: number;
  scopes?: string[];
  /**
   * OpenID Connect sign-in (svc's company sign-in): the claims of each login name, put in the ID
   * token (scopes `openid profile email groups`; `name`, `email` and `groups` claims).
   */
  claims?: (login: string) => Record<string, unknown>;
  /** How the client authenticates at the token endpoint (default client_secret_post). */
  tokenEndpointAuthMethod?: "client_secret_post" | "client_secret_basic";
}

export interface OAuthProviderPeer {
  issuer: string;
  /** host:port, for SVC_OUTBOUND_ALLOW. */
  hostPort: string;
  clientId: string;
  clientSecret: string;
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl: string;
  apiUrl: string;
  /** Bearer tokens the API saw (to check the executor sent them, and nothing else did). */
  apiRequests: { path: string; authorization: string | undefined; body: string }[];
  /** Tokens the revocation endpoint received, by hint. */
  revocations: { token_type_hint: string | undefined }[];
  /**
   * Plays the person at the provider: opens the authorization URL, signs in as `login`, grants
   * consent (or aborts with `deny`), and returns where the provider sends the browser back
   * (the redirect_uri with code, state, iss, or an error), or the provider's own error page.
   */
  authorize(
    authorizationUrl: string,
    options?: { login?: string; deny?: boolean },
  ): Promise<{ redirectedTo: string } | { errorPage: string; status: number }>;
  close(): Promise<void>;
}

const DEFAULT_SCOPES = ["offline_access", "read", "write", "admin"];

export async function startOAuthProvider(options: OAuthProviderOptions): Promise<OAuthProviderPeer> {
  const clientId = options.clientId ?? "svc-test-client";
  const clientSecret = options.clientSecret ?? "svc-test-secret-0123456789abcdef";
  const server: Server = createServer();
  await new Promise<void>((r) => server.listen(options.port ?? 0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: options.tokenEndpointAuthMethod ?? "client_secret_post",
      },
    ],
    scopes: options.scopes ?? DEFAULT_SCOPES,
    ...(options.claims
      ? {
          claims: { openid: ["sub"], profile: ["name"], email: ["email"], groups: ["groups"] },
          conformIdTokenClaims: false,
        }
      : {}),
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true }, revocation: { enabled: true } },
    // Every consented grant gets a refresh token, and each refresh rotates it (RFC 9700 §4.14.2).
    issueRefreshToken: async (_ctx: unknown, client: ClientLike) => client.grantTypeAllowed("refresh_token"),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: options.accessTokenTtl ?? 3600,
      AuthorizationCode: 60,
      RefreshToken: 14 * 86_400,
      Interaction: 600,
      Session: 3600,
      Grant: 14 * 86_400,
    },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ ...options.claims?.(id), sub: id }),
    }),
    cookies: { keys: ["svc-test-cookie-key-0123456789"] },
  });
  // The provider's own logs of refused requests stay out of the test output.
  provider.on("server_error", (_ctx: unknown, err: unknown) => console.error("oauth peer server_error", err));

  const apiRequests: OAuthProviderPeer["apiRequests"] = [];
  const revocations: OAuthProviderPeer["revocations"] = [];
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.method === "POST" && ctx.path === "/token/revocation" && ctx.status === 200)
      revocations.push({ token_type_hint: (ctx.oidc?.params?.token_type_hint as string | undefined) ?? undefined });
  });
  const providerCallback = provider.callback();
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith("/api/")) return void api(req, res);
    providerCallback(req, res);
  });

  async function api(req: IncomingMessage, res: ServerResponse) {
    let body = "";
    for await (const chunk of req) body += chunk;
    const url = new URL(req.url!, issuer);
    apiRequests.push({ path: url.pathname + url.search, authorization: req.headers.authorization, body });
    const json = (status: number, value: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const token = bearer ? await provider.AccessToken.find(bearer) : undefined;
    if (!token || token.isExpired) {
      res.setHeader("www-authenticate", 'Bearer error="invalid_token"');
      return json(401, { error: "invalid_token" });
    }
    if (url.pathname === "/api/me") return json(200, { sub: token.accountId, scope: token.scope ?? "" });
    if (url.pathname === "/api/echo")
      return json(200, { received: body ? JSON.parse(body) : null, query: Object.fromEntries(url.searchParams) });
    if (url.pathname === "/api/big") {
      const mb = Math.min(Number(url.searchParams.get("mb") ?? "50"), 200);
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      res.write('{"data":"');
      for (let i = 0; i < mb && !res.destroyed; i++) {
        if (!res.write(chunk)) await new Promise((r) => res.once("drain", r));
      }
      return void res.end('"}');
    }
    json(404, { error: "not_found" });
  }

  async function authorize(authorizationUrl: string, opts: { login?: string; deny?: boolean } = {}) {
    const jar = new Map<string, string>();
    const remember = (res: Response) => {
      for (const cookie of res.headers.getSetCookie()) {
        const [pair] = cookie.split(";");
        const eq = pair!.indexOf("=");
        const name = pair!.slice(0, eq);
        const value = pair!.slice(eq + 1);
        if (/expires=Thu, 01 Jan 1970/i.test(cookie) || value === "") jar.delete(name);
        else jar.set(name, value);
      }
    };
    const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    let next: { url: string; method: "GET" | "POST"; form?: Record<string, string> } = {
      url: authorizationUrl,
      method: "GET",
    };
    for (let hop = 0; hop < 20; hop++) {
      if (!next.url.startsWith(issuer)) return { redirectedTo: next.url };
      const res = await fetch(next.url, {
        method: next.method,
        redirect: "manual",
        headers: {
          cookie: cookieHeader(),
          ...(next.form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        },
        body: next.form ? new URLSearchParams(next.form).toString() : undefined,
      });
      remember(res);
      const location = res.headers.get("location");
      if (location) {
        next = { url: new URL(location, next.url).toString(), method: "GET" };
        continue;
      }
      const html = await res.text();
      const interaction = /\/interaction\/([^/?#]+)$/.exec(new URL(next.url).pathname);
      if (res.status === 200 && interaction) {
        const uid = interaction[1]!;
        if (opts.deny) {
          next = { url: `${issuer}/interaction/${uid}/abort`, method: "GET" };
          continue;
        }
        const prompt =
          /name="prompt" value="(\w+)"/.exec(html)?.[1] ?? (html.includes('name="login"') ? "login" : "consent");
        next = {
          url: `${issuer}/interaction/${uid}`,
          method: "POST",
          form:
            prompt === "login"
              ? { prompt: "login", login: opts.login ?? "ada", password: "any" }
              : { prompt: "consent" },
        };
        continue;
      }
      return { errorPage: html, status: res.status };
    }
    throw new Error("the authorization did not finish within 20 hops");
  }

  return {
    issuer,
    hostPort: `127.0.0.1:${port}`,
    clientId,
    clientSecret,
    authorizationUrl: `${issuer}/auth`,
    tokenUrl: `${issuer}/token`,
    revocationUrl: `${issuer}/token/revocation`,
    apiUrl: `${issuer}/api`,
    apiRequests,
    revocations,
    authorize,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A connector definition whose OAuth and API are this peer (write it to SVC_CONNECTORS_DIR). */
export function peerConnectorDefinition(peer: OAuthProviderPeer, connectorId = "loopback-oauth") {
  return {
    connector_id: connectorId,
    name: "Loopback OAuth",
    provider: "svc test peer",
    description: "A connector whose provider is the test peer (oidc-provider on loopback).",
    long_description: "## Loopback OAuth\n\nFor tests: **oidc-provider** on loopback.",
    icon_url: "/connectors/http-json.svg",
    version: "1.0.0",
    publisher: { publisher_id: "svc-tests", name: "svc tests", verified: false },
    certified: false,
    pricing_model: "free",
    capabilities: ["test:read", "test:write"],
    deployment_modes: ["cloud", "self-hosted"],
    configuration_schema: {
      type: "object",
      required: ["workspace"],
      properties: {
        workspace: { type: "string", minLength: 1, maxLength: 50, pattern: "^[a-z0-9-]+$" },
        limit: { type: "integer", minimum: 1, maximum: 100 },
      },
      additionalProperties: false,
    },
    api_base_url: peer.apiUrl,
    oauth: {
      required: true,
      scopes: ["offline_access", "read", "write"],
      authorization_url: peer.authorizationUrl,
      token_url: peer.tokenUrl,
      revocation_url: peer.revocationUrl,
      issuer: peer.issuer,
      client_id: peer.clientId,
      client_secret: peer.clientSecret,
      pkce: true,
    },
    actions: [
      {
        id: "me",
        description: "Who the token belongs to",
        method: "GET",
        path: "/me",
        input_schema: { type: "object", properties: {}, additionalProperties: false },
        scopes: ["read"],
      },
      {
        id: "echo",
        description: "Sends the input back",
        method: "POST",
        path: "/echo",
        input_schema: { type: "object", properties: { message: { type: "string", maxLength: 1000 } } },
        scopes: ["write"],
      },
      {
        id: "big",
        description: "An answer of `mb` megabytes",
        method: "GET",
        path: "/big",
        input_schema: { type: "object", properties: { mb: { type: "integer", minimum: 1, maximum: 200 } } },
        scopes: ["read"],
      },
    ],
  };
}
