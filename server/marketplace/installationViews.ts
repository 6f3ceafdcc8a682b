import type { z } from "zod";
import type { Db } from "../db/client";
import type { ConnectorInstallation as Row } from "../db/generated/sqlite/client";
import { NotFound } from "../errors";
import { connectorById } from "./catalogue";
import { DAY_MS } from "./connectorStatistics";
import type { ConnectorInstallation, HealthStatus } from "./schemas";

/** The states the API shows; `pending_oauth` and `expired` installations never became installations. */
export const VISIBLE_STATUSES = ["active", "suspended", "uninstalled"];

export interface InvocationFigures {
  lastInvocationAt: Date | null;
  count30d: number;
}

/**
 * Invocation figures of some installations, from the invocation records (one grouped query for
 * the 30 days, one for the last invocation ever).
 */
export async function invocationFigures(db: Db, installationIds: string[]): Promise<Map<string, InvocationFigures>> {
  const out = new Map<string, InvocationFigures>(
    installationIds.map((id) => [id, { lastInvocationAt: null, count30d: 0 }]),
  );
  if (installationIds.length === 0) return out;
  const [recent, last] = await Promise.all([
    db.connectorInvocation.groupBy({
      by: ["installationId"],
      where: { installationId: { in: installationIds }, createdAt: { gte: new Date(Date.now() - 30 * DAY_MS) } },
      _count: { _all: true },
    }),
    db.connectorInvocation.groupBy({
      by: ["installationId"],
      where: { installationId: { in: installationIds } },
      _max: { createdAt: true },
    }),
  ]);
  for (const r of recent) out.get(r.installationId)!.count30d = r._count._all;
  for (const r of last) out.get(r.installationId)!.lastInvocationAt = r._max.createdAt;
  return out;
}

/** An installation as its organization sees it: never a token, sealed or not. */
export function installationView(row: Row, figures: InvocationFigures): z.input<typeof ConnectorInstallation> {
  const c = connectorById(row.connectorId);
  return {
    installation_id: row.id,
    connector: {
      connector_id: row.connectorId,
      name: c?.definition.name ?? row.connectorId,
      provider: c?.definition.provider ?? "unknown",
      icon_url: c?.iconUrl ?? null,
    },
    status: row.status as z.input<typeof ConnectorInstallation>["status"],
    deployment_mode: row.deploymentMode as z.input<typeof ConnectorInstallation>["deployment_mode"],
    config: (row.config ?? {}) as Record<string, unknown>,
    granted_permissions: Array.isArray(row.grantedPermissions) ? (row.grantedPermissions as string[]) : [],
    health_status: row.healthStatus as z.infer<typeof HealthStatus>,
    installed_by: row.installedBy,
    installed_at: (row.installedAt ?? row.createdAt).toISOString(),
    last_invocation_at: figures.lastInvocationAt?.toISOString() ?? null,
    invocation_count_30d: figures.count30d,
  };
}

/** An installation of the caller's organization in a visible state, or 404 (another org's looks the same). */
export async function findInstallation(db: Db, orgDid: string, id: string): Promise<Row> {
  const row = await db.connectorInstallation.findUnique({ where: { id } });
  if (!row || row.orgDid !== orgDid || !VISIBLE_STATUSES.includes(row.status)) throw NotFound("installation", id);
  return row;
}
