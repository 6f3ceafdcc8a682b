import type { z } from "zod";
import type { Db } from "../db/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import type { InstallationStateView } from "./schemas";

/**
 * Where an installation stands, every state included (`pending_oauth` and `expired` too, which
 * the API's installation views leave out): what the console's install flow shows while the person
 * is at the provider and after the callback. `detail` says why an authorization failed.
 */
export async function installationState(
  db: Db,
  principal: Principal,
  id: string,
): Promise<z.input<typeof InstallationStateView>> {
  const row = await db.connectorInstallation.findUnique({ where: { id } });
  if (!row || row.orgDid !== principal.orgDid) throw NotFound("installation", id);
  return {
    installation_id: row.id,
    connector_id: row.connectorId,
    status: row.status as z.input<typeof InstallationStateView>["status"],
    detail: row.status === "expired" || row.healthStatus === "down" ? row.healthDetail : null,
    expires_at: row.pendingExpiresAt?.toISOString() ?? null,
    installed_at: row.installedAt?.toISOString() ?? null,
  };
}
