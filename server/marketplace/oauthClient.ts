import * as oauth from "oauth4webapi";
import type { Db } from "../db/client";
import { domainError } from "../errors";
import { isAllowListed } from "../outbound/allowList";
import { createGuardedFetch } from "../outbound/guardedFetch";
import { processWide } from "../processWide";
import { configuredClient, type CatalogueConnector } from "./catalogue";
import { unseal } from "./tokenSealing";

/**
 * svc as an OAuth 2.0 client of a connector's provider, with oauth4webapi: the provider's
 * endpoints from the definition, the organization's client (console → environment →
 * definition), and every request through the outbound guard (a token endpoint at a private
 * address is refused like any other destination). Plain http is allowed only to hosts listed in
 * SVC_OUTBOUND_ALLOW (the tests' loopback authorization server).
 */
export interface ProviderClient {
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  clientAuth: oauth.ClientAuth;
  options: { [oauth.customFetch]: typeof fetch; [oauth.allowInsecureRequests]?: boolean };
  scopeSeparator: string;
}

/** Token answers are small; 256 KiB leaves room for a provider that adds an id_token and metadata. */
const providerFetch = createGuardedFetch({ timeoutMs: 15_000, maxBytes: 256 * 1024, maxRedirects: 0 });

/** The context a console-set client secret is sealed under. */
export const clientSecretContext = (orgDid: string, connectorId: string) => `client:${orgDid}:${connectorId}`;

export async function providerClient(db: Db, orgDid: string, connector: CatalogueConnector): Promise<ProviderClient> {
  const { oauth: settings, connector_id } = connector.definition;
  if (!settings.required || !settings.authorization_url || !settings.token_url)
    throw new Error(`connector ${connector_id} does not use OAuth`);
  const row = await db.connectorClient.findUnique({
    where: { orgDid_connectorId: { orgDid, connectorId: connector_id } },
  });
  const credentials = row
    ? {
        clientId: row.clientId,
        clientSecret: row.clientSecretSealed
          ? await unseal(row.clientSecretSealed, clientSecretContext(orgDid, connector_id))
          : undefined,
      }
    : configuredClient(connector);
  if (!credentials)
    throw domainError(
      "connector_not_configured",
      `No OAuth client is set for ${connector.definition.name}: an administrator sets its client id and secret in the console (Marketplace → ${connector.definition.name} → OAuth client), or the operator sets SVC_CONNECTOR_${connector_id.toUpperCase().replace(/-/g, "_")}_CLIENT_ID and _CLIENT_SECRET.`,
      { connector_id },
    );
  const authorizationUrl = new URL(settings.authorization_url);
  const tokenUrl = new URL(settings.token_url);
  const insecure = [authorizationUrl, tokenUrl].some((u) => u.protocol === "http:" && isAllowListed(u));
  return {
    as: {
      // RFC 9207: the `iss` a provider sends back must be this value; the definition's `issuer`, else the authorization server's origin.
      issuer: settings.issuer ?? authorizationUrl.origin,
      authorization_endpoint: settings.authorization_url,
      token_endpoint: settings.token_url,
      ...(settings.revocation_url ? { revocation_endpoint: settings.revocation_url } : {}),
      code_challenge_methods_supported: ["S256"],
    },
    client: { client_id: credentials.clientId },
    clientAuth: credentials.clientSecret ? oauth.ClientSecretPost(credentials.clientSecret) : oauth.None(),
    options: { [oauth.customFetch]: providerFetch, ...(insecure ? { [oauth.allowInsecureRequests]: true } : {}) },
    scopeSeparator: settings.scope_separator ?? " ",
  };
}

/** Metadata read per issuer: for an hour, or five minutes when the provider published none. */
const advertised = processWide(
  "marketplace.issParameterAdvertised",
  () => new Map<string, { value: boolean; until: number }>(),
);

/**
 * Whether the provider's authorization server metadata (RFC 8414, else OpenID Connect discovery, at
 * its issuer) advertises `authorization_response_iss_parameter_supported`: then an authorization
 * answer without `iss` is refused (RFC 9207 §2.4), which oauth4webapi does when the flag is set.
 * A provider that publishes no metadata (or metadata for another issuer) gets `false`: its answers
 * are checked against `iss` only when they carry it.
 */
export async function issParameterAdvertised(provider: ProviderClient): Promise<boolean> {
  const issuer = provider.as.issuer;
  const now = Date.now();
  const known = advertised.get(issuer);
  if (known && known.until > now) return known.value;
  let value = false;
  let url: URL | undefined;
  try {
    url = new URL(issuer);
  } catch {
    url = undefined;
  }
  const options = {
    [oauth.customFetch]: provider.options[oauth.customFetch],
    ...(url?.protocol === "http:" && isAllowListed(url) ? { [oauth.allowInsecureRequests]: true } : {}),
  };
  for (const algorithm of ["oauth2", "oidc"] as const) {
    if (!url) break;
    try {
      const metadata = await oauth.processDiscoveryResponse(
        url,
        await oauth.discoveryRequest(url, { ...options, algorithm }),
      );
      value = metadata.authorization_response_iss_parameter_supported === true;
      advertised.set(issuer, { value, until: now + 3_600_000 });
      return value;
    } catch {
      // Not published there (or not for this issuer): try the other well-known place.
    }
  }
  if (advertised.size > 1000) advertised.clear();
  advertised.set(issuer, { value, until: now + 300_000 });
  return value;
}

/** What svc keeps of a token answer: never logged, sealed before it is stored. */
export interface ProviderTokens {
  accessToken: string;
  refreshToken: string | undefined;
  expiresAt: Date | null;
  scope: string | undefined;
}

export function tokensOf(answer: oauth.TokenEndpointResponse, now = new Date()): ProviderTokens {
  return {
    accessToken: answer.access_token,
    refreshToken: answer.refresh_token,
    expiresAt: typeof answer.expires_in === "number" ? new Date(now.getTime() + answer.expires_in * 1000) : null,
    scope: answer.scope,
  };
}

/**
 * Why an exchange with the provider failed, in words safe for a log, a record or the console:
 * the OAuth error code and description, or the kind of failure, never a token or a body.
 */
export function providerFailure(err: unknown): string {
  if (err instanceof oauth.ResponseBodyError)
    return `${err.error}${err.error_description ? `: ${err.error_description.slice(0, 200)}` : ""} (HTTP ${err.status})`;
  if (err instanceof oauth.AuthorizationResponseError)
    return `${err.error}${err.error_description ? `: ${err.error_description.slice(0, 200)}` : ""}`;
  if (err instanceof Error) return err.message.slice(0, 300);
  return "unknown failure";
}
