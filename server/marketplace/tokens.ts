import * as oauth from "oauth4webapi";
import type { Database, Db } from "../db/client";
import type { ConnectorInstallation } from "../db/generated/sqlite/client";
import { domainError } from "../errors";
import { putPlatformEvent } from "../events/platformEvents";
import { connectorById } from "./catalogue";
import { providerClient, providerFailure, tokensOf, type ProviderTokens } from "./oauthClient";
import { seal, unseal } from "./tokenSealing";

/** The AAD contexts of an installation's sealed tokens: a token copied into another row does not open. */
export const accessContext = (installationId: string) => `${installationId}:access`;
export const refreshContext = (installationId: string) => `${installationId}:refresh`;

/** A token this close to its expiry is refreshed before use (the worker refreshes earlier, see tasks.ts). */
export const REFRESH_BEFORE_USE_MS = 60_000;

/**
 * The access token an invocation sends, decrypted; refreshed first when it is about to expire
 * (rotating the refresh token when the provider rotates it). null for a connector without OAuth.
 * The token never leaves the server: the executor puts it in the Authorization header of the
 * provider call and nowhere else. Throws `connector_connection_expired` (409) when the token
 * expired and cannot be refreshed, and `illegal_state_transition` for an installation that is
 * not active.
 */
export async function accessTokenFor(db: Db, installation: ConnectorInstallation): Promise<string | null> {
  const connector = connectorById(installation.connectorId);
  if (!connector?.definition.oauth.required) return null;
  if (installation.status !== "active")
    throw domainError(
      "illegal_state_transition",
      `The installation is ${installation.status}; only an active one is invoked.`,
      {
        current_state: installation.status,
        requested_state: "active",
      },
    );
  if (!installation.accessTokenSealed)
    throw domainError("connector_connection_expired", "The installation holds no access token; install it again.", {
      installation_id: installation.id,
    });
  const expiresAt = installation.tokenExpiresAt?.getTime();
  if (expiresAt === undefined || expiresAt - Date.now() > REFRESH_BEFORE_USE_MS)
    return unseal(installation.accessTokenSealed, accessContext(installation.id));
  if (!installation.refreshTokenSealed) {
    if (expiresAt > Date.now()) return unseal(installation.accessTokenSealed, accessContext(installation.id));
    throw domainError(
      "connector_connection_expired",
      "The installation's access token expired and the provider gave no refresh token: install it again.",
      { installation_id: installation.id },
    );
  }
  const outcome = await refreshInstallationTokens(db, installation);
  if (!outcome.ok)
    throw domainError(
      "connector_connection_expired",
      `The installation's access token expired and refreshing it failed (${outcome.reason}): install it again.`,
      { installation_id: installation.id },
    );
  return outcome.accessToken;
}

export type RefreshOutcome = { ok: true; accessToken: string } | { ok: false; reason: string; permanent: boolean };
export type Exchanged = { ok: true; tokens: ProviderTokens } | { ok: false; reason: string; permanent: boolean };

/**
 * Exchanges the installation's refresh token at the provider (reads and the provider call only:
 * nothing is written, so the worker makes it outside any transaction). A 4xx from the provider
 * (invalid_grant: revoked, expired, reused) is final; a network failure may pass.
 */
export async function exchangeRefreshToken(db: Db, installation: ConnectorInstallation): Promise<Exchanged> {
  const connector = connectorById(installation.connectorId);
  if (!connector || !installation.refreshTokenSealed) return { ok: false, reason: "no refresh token", permanent: true };
  let refreshToken: string;
  try {
    refreshToken = await unseal(installation.refreshTokenSealed, refreshContext(installation.id));
  } catch (err) {
    return {
      ok: false,
      reason: `the sealed refresh token cannot be opened: ${(err as Error).message}`,
      permanent: true,
    };
  }
  try {
    const provider = await providerClient(db, installation.orgDid, connector);
    const response = await oauth.refreshTokenGrantRequest(
      provider.as,
      provider.client,
      provider.clientAuth,
      refreshToken,
      provider.options,
    );
    return {
      ok: true,
      tokens: tokensOf(await oauth.processRefreshTokenResponse(provider.as, provider.client, response)),
    };
  } catch (err) {
    const permanent = err instanceof oauth.ResponseBodyError && err.status >= 400 && err.status < 500;
    return { ok: false, reason: providerFailure(err), permanent };
  }
}

/**
 * Stores refreshed tokens sealed. Providers that rotate refresh tokens (RFC 9700 §4.14.2) return
 * a new one and invalidate the old: the new one replaces it in the same update, conditioned on
 * the old one still being there, so two processes refreshing at once cannot both win; the loser
 * reads the winner's token.
 */
export async function storeRefreshedTokens(
  tx: Db,
  installation: ConnectorInstallation,
  tokens: ProviderTokens,
): Promise<RefreshOutcome> {
  const { count } = await tx.connectorInstallation.updateMany({
    where: { id: installation.id, refreshTokenSealed: installation.refreshTokenSealed, status: installation.status },
    data: {
      accessTokenSealed: await seal(tokens.accessToken, accessContext(installation.id)),
      ...(tokens.refreshToken
        ? { refreshTokenSealed: await seal(tokens.refreshToken, refreshContext(installation.id)) }
        : {}),
      tokenExpiresAt: tokens.expiresAt,
      ...(tokens.scope !== undefined ? { grantedScopes: tokens.scope } : {}),
      healthStatus: "healthy",
      healthCheckedAt: new Date(),
      healthDetail: null,
    },
  });
  if (count === 1) return { ok: true, accessToken: tokens.accessToken };
  const now = await tx.connectorInstallation.findUnique({ where: { id: installation.id } });
  if ((now?.status === "active" || now?.status === "suspended") && now.accessTokenSealed)
    return { ok: true, accessToken: await unseal(now.accessTokenSealed, accessContext(now.id)) };
  return { ok: false, reason: "the installation is no longer installed", permanent: true };
}

/** Both steps in the caller's handle (accessTokenFor, inside an invocation's transaction). */
export async function refreshInstallationTokens(db: Db, installation: ConnectorInstallation): Promise<RefreshOutcome> {
  const exchanged = await exchangeRefreshToken(db, installation);
  if (!exchanged.ok) return exchanged;
  return storeRefreshedTokens(db, installation, exchanged.tokens);
}

/**
 * A refresh failed for good: the installation's health goes `down` (it stays `active`, so an
 * administrator sees it and installs again) and `connector.connection_expired` goes on the
 * organization's bus, once per failure (the condition on the health makes a second worker's
 * attempt a no-op).
 */
export async function markConnectionExpired(
  tx: Db,
  engine: Database["engine"],
  installation: ConnectorInstallation,
  reason: string,
): Promise<boolean> {
  const { count } = await tx.connectorInstallation.updateMany({
    where: { id: installation.id, status: { in: ["active", "suspended"] }, NOT: { healthStatus: "down" } },
    data: {
      healthStatus: "down",
      healthCheckedAt: new Date(),
      healthDetail: `token refresh failed: ${reason}`.slice(0, 500),
    },
  });
  if (count === 0) return false;
  await putPlatformEvent(tx, engine, installation.orgDid, {
    type: "connector.connection_expired",
    payload: {
      installation_id: installation.id,
      connector_id: installation.connectorId,
      reason: reason.slice(0, 300),
      expired_at: installation.tokenExpiresAt?.toISOString() ?? null,
    },
    source: "svc",
  });
  return true;
}
