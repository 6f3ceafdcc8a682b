import type { z } from "zod";
import type { Db } from "../db/client";
import { IllegalTransition, NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { connectorById } from "./catalogue";
import { checkInstallationSettings } from "./installConnector";
import { findInstallation, installationView, invocationFigures } from "./installationViews";
import type { InstallationUpdateRequest } from "./schemas";

/**
 * Changes an installation's config, granted permissions or base URL (checked as at install),
 * or moves it active ⇄ suspended. An uninstalled installation is final: any change is 409.
 * A suspended installation keeps its tokens (the worker keeps refreshing them) but is not invoked.
 */
export async function updateInstallation(
  db: Db,
  principal: Principal,
  id: string,
  body: z.output<typeof InstallationUpdateRequest>,
) {
  const row = await findInstallation(db, principal.orgDid, id);
  if (row.status === "uninstalled") throw IllegalTransition("installation", row.status, body.status ?? "changed");
  const connector = connectorById(row.connectorId);
  if (!connector) throw NotFound("connector", row.connectorId);
  checkInstallationSettings(connector, body);
  const { count } = await db.connectorInstallation.updateMany({
    where: { id, status: row.status },
    data: {
      ...(body.config !== undefined ? { config: body.config as object } : {}),
      ...(body.granted_permissions !== undefined ? { grantedPermissions: body.granted_permissions } : {}),
      ...(body.base_url !== undefined ? { baseUrl: body.base_url } : {}),
      ...(body.status !== undefined ? { status: body.status } : {}),
    },
  });
  // Uninstalled meanwhile by a concurrent call.
  if (count === 0) throw IllegalTransition("installation", "uninstalled", body.status ?? "changed");
  const updated = await findInstallation(db, principal.orgDid, id);
  const figures = await invocationFigures(db, [id]);
  return installationView(updated, figures.get(id)!);
}
