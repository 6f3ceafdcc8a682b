import * as oauth from "oauth4webapi";
import type { Db } from "../db/client";
import type { ConnectorInstallation } from "../db/generated/sqlite/client";
import { IllegalTransition } from "../errors";
import type { Principal } from "../governance/principal";
import { connectorById } from "./catalogue";
import { findInstallation, installationView, invocationFigures } from "./installationViews";
import { providerClient, providerFailure } from "./oauthClient";
import { unseal } from "./tokenSealing";
import { accessContext, refreshContext } from "./tokens";
import { logger } from "../telemetry/log";

/**
 * Uninstalls: the installation becomes `uninstalled` (final) and its tokens are erased from the
 * database in the same transaction. Where the provider offers RFC 7009 revocation, the tokens
 * are revoked there too, after the commit (`afterCommit`), so a slow provider holds no lock;
 * a failed revocation is logged (without the token) and does not undo the uninstall: the
 * tokens are gone from svc either way.
 */
export async function uninstallInstallation(
  db: Db,
  principal: Principal,
  id: string,
  afterCommit: (fn: () => Promise<void>) => void,
) {
  const row = await findInstallation(db, principal.orgDid, id);
  if (row.status === "uninstalled") throw IllegalTransition("installation", "uninstalled", "uninstalled");
  const { count } = await db.connectorInstallation.updateMany({
    where: { id, status: row.status },
    data: {
      status: "uninstalled",
      uninstalledAt: new Date(),
      accessTokenSealed: null,
      refreshTokenSealed: null,
      tokenExpiresAt: null,
    },
  });
  if (count === 0) throw IllegalTransition("installation", "uninstalled", "uninstalled");
  const revoke = await revocationOf(db, row);
  if (revoke) afterCommit(revoke);
  const updated = await findInstallation(db, principal.orgDid, id);
  const figures = await invocationFigures(db, [id]);
  return installationView(updated, figures.get(id)!);
}

/** The provider-side revocation of the tokens `row` held, opened now (before they are erased), run later. */
async function revocationOf(db: Db, row: ConnectorInstallation): Promise<(() => Promise<void>) | undefined> {
  const connector = connectorById(row.connectorId);
  if (!connector?.definition.oauth.revocation_url) return undefined;
  const tokens: { token: string; hint: string }[] = [];
  try {
    if (row.refreshTokenSealed)
      tokens.push({ token: await unseal(row.refreshTokenSealed, refreshContext(row.id)), hint: "refresh_token" });
    if (row.accessTokenSealed)
      tokens.push({ token: await unseal(row.accessTokenSealed, accessContext(row.id)), hint: "access_token" });
  } catch (err) {
    logger().error(`installation ${row.id}: its tokens cannot be opened for revocation: ${(err as Error).message}`);
    return undefined;
  }
  if (tokens.length === 0) return undefined;
  let provider: Awaited<ReturnType<typeof providerClient>>;
  try {
    provider = await providerClient(db, row.orgDid, connector);
  } catch (err) {
    logger().error(`installation ${row.id}: no OAuth client to revoke its tokens with: ${(err as Error).message}`);
    return undefined;
  }
  return async () => {
    for (const { token, hint } of tokens) {
      try {
        const response = await oauth.revocationRequest(provider.as, provider.client, provider.clientAuth, token, {
          ...provider.options,
          additionalParameters: { token_type_hint: hint },
        });
        await oauth.processRevocationResponse(response);
      } catch (err) {
        logger().error(`installation ${row.id}: revoking its ${hint} at the provider failed: ${providerFailure(err)}`);
      }
    }
  };
}
