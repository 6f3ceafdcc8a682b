import type { Database } from "../db/client";
import type { BridgeHandler } from "../sandbox/bridge";
import type { Task } from "../worker/registry";
import { checkConnectorHealth } from "./checkConnectorHealth";
import { invokeFromRun } from "./invokeFromRun";
import { exchangeRefreshToken, markConnectionExpired, storeRefreshedTokens } from "./tokens";

/** The worker refreshes an access token this long before it expires, so no invocation waits for a refresh. */
export const REFRESH_AHEAD_MS = 5 * 60_000;
/** Installations refreshed per round; the rest wait for the next round (30 s later). */
const REFRESH_BATCH = 50;
/** Used and expired OAuth states are kept a day (for the record of a late, refused callback), then purged. */
const STATE_RETENTION_MS = 86_400_000;

/**
 * Pending installations whose 15 minutes passed become `expired`; spent and expired states older
 * than a day are purged. The callback checks the time itself, so this only tidies up.
 */
export async function expirePendingInstallations(db: Database, now = new Date()): Promise<number> {
  return db.writeTx(async (tx) => {
    const { count } = await tx.connectorInstallation.updateMany({
      where: { status: "pending_oauth", pendingExpiresAt: { lte: now } },
      data: { status: "expired", healthDetail: "authorization not completed within 15 minutes" },
    });
    const purged = await tx.connectorOAuthState.deleteMany({
      where: { expiresAt: { lte: new Date(now.getTime() - STATE_RETENTION_MS) } },
    });
    return count + purged.count;
  });
}

/**
 * Refreshes the access tokens about to expire (within 5 minutes) of active and suspended
 * installations. The provider is called outside any transaction; the answer is stored in a short
 * one. A final refusal (invalid_grant: the refresh token was revoked, expired or already used)
 * marks the installation's health `down` and raises `connector.connection_expired`; a network
 * failure marks it `degraded` and is tried again next round.
 */
export async function refreshExpiringTokens(db: Database, now = new Date()): Promise<number> {
  const due = await db.read.connectorInstallation.findMany({
    where: {
      status: { in: ["active", "suspended"] },
      refreshTokenSealed: { not: null },
      tokenExpiresAt: { lte: new Date(now.getTime() + REFRESH_AHEAD_MS) },
      NOT: { healthStatus: "down" },
    },
    orderBy: { tokenExpiresAt: "asc" },
    take: REFRESH_BATCH,
  });
  let handled = 0;
  for (const installation of due) {
    const exchanged = await exchangeRefreshToken(db.read, installation);
    if (exchanged.ok) {
      await db.writeTx((tx) => storeRefreshedTokens(tx, installation, exchanged.tokens));
    } else if (exchanged.permanent) {
      await db.writeTx((tx) => markConnectionExpired(tx, db.engine, installation, exchanged.reason));
    } else {
      await db.writeTx((tx) =>
        tx.connectorInstallation.updateMany({
          where: { id: installation.id, NOT: { healthStatus: "down" } },
          data: {
            healthStatus: "degraded",
            healthCheckedAt: new Date(),
            healthDetail: `token refresh failed, will retry: ${exchanged.reason}`.slice(0, 500),
          },
        }),
      );
    }
    handled++;
  }
  return handled;
}

export const marketplaceTasks: Task[] = [
  { name: "marketplace.expire-pending", everyMs: 30_000, run: (db) => expirePendingInstallations(db) },
  { name: "marketplace.refresh-tokens", everyMs: 30_000, run: (db) => refreshExpiringTokens(db) },
  { name: "marketplace.health-check", everyMs: 5 * 60_000, run: (db) => checkConnectorHealth(db) },
];

/** Where runs happen, their bundles get `ctx.connectors.invoke(installation_id, action, input)`. */
export const marketplaceBridgeEntries: Record<string, BridgeHandler> = { "connectors.invoke": invokeFromRun };
