import * as oauth from "oauth4webapi";
import type { z } from "zod";
import { database, type Db } from "../db/client";
import { domainError } from "../errors";
import type { Principal } from "../governance/principal";
import { delegationPrincipal } from "../identity/authenticate";
import { consoleInstallationUrl } from "./callbackUrl";
import { connectorById } from "./catalogue";
import { connectorInstalled, stateHashOf, verifierContext } from "./installConnector";
import { issParameterAdvertised, providerClient, providerFailure, tokensOf } from "./oauthClient";
import type { OAuthCallbackQuery } from "./schemas";
import { seal, unseal } from "./tokenSealing";
import { checkBrowserBinding } from "./browserBinding";
import { accessContext, refreshContext } from "./tokens";

const invalidState = (detail: string) => domainError("oauth_state_invalid", detail);

/**
 * Who completes an authorization: the provider redirects a browser here with no bearer token,
 * so the caller is the installer the `state` was issued to, under the delegation they installed
 * with (revoked or expired since: refused). An unknown state names nobody and is refused before
 * anything runs; the refusal is recorded like any other.
 */
export async function callbackPrincipal(request: Request): Promise<Principal> {
  const state = new URL(request.url).searchParams.get("state");
  if (!state || state.length > 500) throw invalidState("The callback carries no state.");
  const db = (await database()).read;
  const row = await db.connectorOAuthState.findUnique({ where: { stateHash: stateHashOf(state) } });
  if (!row) throw invalidState("This state was not issued by svc (or was purged): start the installation again.");
  // Started in the console: only the browser that started it may complete it (RFC 9700 §4.7).
  checkBrowserBinding(row, request.headers.get("cookie"));
  const installation = await db.connectorInstallation.findUnique({ where: { id: row.installationId } });
  if (!installation?.installedByDelegationId)
    throw invalidState("The installation this state belongs to is gone: start the installation again.");
  return delegationPrincipal(db, installation.installedByDelegationId);
}

/** The browser's way back: a 303 to the console, never cached, never leaking the code through Referer. */
function redirect(location: string): Response {
  return new Response(null, {
    status: 303,
    headers: { Location: location, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" },
  });
}

/**
 * Completes a pending installation from the provider's redirect (RFC 6749 §4.1.2):
 * the state must be one svc issued, unused, at most 15 minutes old, for a pending installation
 * of the caller; it is spent at once (single use, whatever follows). Then oauth4webapi checks
 * the answer (`error`, and `iss` against the provider's issuer, RFC 9207, where the provider
 * sends it) and exchanges the code with the PKCE verifier and the same redirect_uri. Success:
 * tokens sealed, installation active, `connector.installed` on the bus, 303 to the console's
 * installation page (`?oauth=connected`). A refusal by the provider: the installation is
 * expired (its reason kept for the console, never a token) and the browser goes to the same page
 * with `?oauth=failed&reason=…`. A bad state is a 400 problem: it names no installation.
 */
export async function completeOAuth(
  db: Db,
  principal: Principal,
  query: z.output<typeof OAuthCallbackQuery>,
  setResource: (id: string) => void,
): Promise<Response> {
  const stateHash = stateHashOf(query.state ?? "");
  const row = await db.connectorOAuthState.findUnique({ where: { stateHash } });
  if (!row || !query.state) throw invalidState("This state was not issued by svc.");
  setResource(row.installationId);
  if (row.usedAt) throw invalidState("This authorization link was already used: each works once.");
  if (row.expiresAt.getTime() <= Date.now())
    throw invalidState("This authorization link is older than 15 minutes and expired; start the installation again.");
  if (row.orgDid !== principal.orgDid || row.installerDid !== principal.actorDid)
    throw invalidState("This authorization link was issued to someone else.");
  const installation = await db.connectorInstallation.findUnique({ where: { id: row.installationId } });
  if (installation?.status !== "pending_oauth")
    throw invalidState(`The installation is ${installation?.status ?? "gone"}, not waiting for an authorization.`);
  const { count } = await db.connectorOAuthState.updateMany({
    where: { stateHash, usedAt: null },
    data: { usedAt: new Date() },
  });
  if (count === 0) throw invalidState("This authorization link was already used: each works once.");

  const connector = connectorById(installation.connectorId);
  const fail = async (reason: string, detail: string) => {
    await db.connectorInstallation.update({
      where: { id: installation.id },
      data: {
        status: "expired",
        pendingExpiresAt: null,
        healthDetail: `authorization failed: ${detail}`.slice(0, 500),
      },
    });
    return redirect(consoleInstallationUrl(installation.id, { oauth: "failed", reason }));
  };
  if (!connector) return fail("connector_removed", "the connector is no longer in the catalogue");

  const provider = await providerClient(db, installation.orgDid, connector);
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (typeof v === "string") params.set(k, v);
  // RFC 9207: a provider whose metadata says it sends `iss` must send it (a mix-up otherwise).
  const issRequired = await issParameterAdvertised(provider);
  const as = { ...provider.as, authorization_response_iss_parameter_supported: issRequired };
  let callbackParams: URLSearchParams;
  try {
    callbackParams = oauth.validateAuthResponse(as, provider.client, params, query.state);
  } catch (err) {
    if (err instanceof oauth.AuthorizationResponseError)
      return fail(err.error.replace(/[^a-z_]/g, "").slice(0, 50) || "provider_error", providerFailure(err));
    const iss = params.get("iss");
    return fail(
      iss === null && issRequired
        ? "issuer_missing"
        : iss !== null && iss !== provider.as.issuer
          ? "issuer_mismatch"
          : "invalid_response",
      providerFailure(err),
    );
  }
  let tokens;
  try {
    const verifier = await unseal(row.codeVerifierSealed, verifierContext(stateHash));
    const response = await oauth.authorizationCodeGrantRequest(
      provider.as,
      provider.client,
      provider.clientAuth,
      callbackParams,
      row.redirectUri,
      verifier,
      provider.options,
    );
    tokens = tokensOf(await oauth.processAuthorizationCodeResponse(provider.as, provider.client, response));
  } catch (err) {
    return fail("token_exchange_failed", providerFailure(err));
  }
  const installedAt = new Date();
  await db.connectorInstallation.update({
    where: { id: installation.id },
    data: {
      status: "active",
      accessTokenSealed: await seal(tokens.accessToken, accessContext(installation.id)),
      refreshTokenSealed: tokens.refreshToken ? await seal(tokens.refreshToken, refreshContext(installation.id)) : null,
      tokenExpiresAt: tokens.expiresAt,
      grantedScopes: tokens.scope ?? null,
      installedAt,
      pendingExpiresAt: null,
      healthStatus: "healthy",
      healthCheckedAt: installedAt,
      healthDetail: null,
    },
  });
  await connectorInstalled(db, installation.orgDid, { ...installation, installedAt });
  return redirect(consoleInstallationUrl(installation.id, { oauth: "connected" }));
}
