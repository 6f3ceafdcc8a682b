import type { z } from "zod";
import type { Db } from "../db/client";
import type { ConnectorInstallation } from "../db/generated/sqlite/client";
import { keyset } from "../http/cursor";
import type { Principal } from "../governance/principal";
import { installationView, invocationFigures, VISIBLE_STATUSES } from "./installationViews";
import type { InstallationListQuery } from "./schemas";

/** The organization's installations, newest first; pending and expired authorizations are not installations. */
export async function listInstallations(
  db: Db,
  principal: Principal,
  query: z.output<typeof InstallationListQuery>,
  secret: Buffer,
) {
  const { after, take, page } = keyset<ConnectorInstallation>(secret, "marketplace.installations", query, (last) => [
    last.createdAt.toISOString(),
    last.id,
  ]);
  const rows = await db.connectorInstallation.findMany({
    where: {
      orgDid: principal.orgDid,
      status: query.status ?? { in: VISIBLE_STATUSES },
      ...(query.connector_id ? { connectorId: query.connector_id } : {}),
      ...(after
        ? {
            OR: [
              { createdAt: { lt: new Date(String(after[0])) } },
              { createdAt: new Date(String(after[0])), id: { lt: String(after[1]) } },
            ],
          }
        : {}),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  const figures = await invocationFigures(
    db,
    items.map((r) => r.id),
  );
  return { data: items.map((r) => installationView(r, figures.get(r.id)!)), pagination };
}
