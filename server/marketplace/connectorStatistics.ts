import type { Db } from "../db/client";
import type { RawQueryable } from "../db/raw";

/** Installations that count as installs: in use or paused, not uninstalled, expired or never completed. */
export const INSTALLED_STATUSES = ["active", "suspended"];
export const DAY_MS = 86_400_000;

export interface ConnectorFigures {
  installCount: number;
  ratingAverage: number | null;
  ratingCount: number;
  healthStatus: "healthy" | "degraded" | "down" | "unknown";
  lastHealthCheckAt: Date | null;
}

/**
 * The live figures of some connectors, across every organization: installs, ratings and the
 * worker's last health check, computed from the rows (no counters that drift) in one query
 * through the raw driver: the listing is the marketplace's hot path, and three Prisma queries
 * cost it several times what the counting does. A page asks for its own connectors only, so the
 * cost follows the page, not the catalogue.
 */
export async function connectorFigures(
  raw: RawQueryable,
  connectorIds: readonly string[],
): Promise<Map<string, ConnectorFigures>> {
  const out = new Map<string, ConnectorFigures>();
  for (const id of connectorIds)
    out.set(id, {
      installCount: 0,
      ratingAverage: null,
      ratingCount: 0,
      healthStatus: "unknown",
      lastHealthCheckAt: null,
    });
  if (connectorIds.length === 0) return out;
  const list = connectorIds.map((_, i) => `$${i + 1}`).join(", ");
  const rows = await raw.query<{
    k: string;
    id: string;
    n: number | null;
    a: number | null;
    s: string | null;
    t: unknown;
  }>(
    `SELECT 'i' AS k, connector_id AS id, CAST(COUNT(*) AS INTEGER) AS n, CAST(NULL AS DOUBLE PRECISION) AS a,
            CAST(NULL AS TEXT) AS s, CAST(NULL AS TIMESTAMP) AS t
       FROM connector_installation WHERE connector_id IN (${list}) AND status IN ('active', 'suspended') GROUP BY connector_id
     UNION ALL
     SELECT 'r', connector_id, CAST(COUNT(*) AS INTEGER), CAST(AVG(rating) AS DOUBLE PRECISION), CAST(NULL AS TEXT),
            CAST(NULL AS TIMESTAMP)
       FROM connector_rating WHERE connector_id IN (${list}) GROUP BY connector_id
     UNION ALL
     SELECT 'h', connector_id, CAST(NULL AS INTEGER), CAST(NULL AS DOUBLE PRECISION), status, checked_at FROM connector_health WHERE connector_id IN (${list})`,
    [...connectorIds],
  );
  for (const row of rows) {
    const f = out.get(row.id);
    if (!f) continue;
    if (row.k === "i") f.installCount = Number(row.n);
    else if (row.k === "r") {
      f.ratingCount = Number(row.n);
      f.ratingAverage = row.a === null ? null : Math.round(Number(row.a) * 100) / 100;
    } else {
      f.healthStatus = row.s as ConnectorFigures["healthStatus"];
      f.lastHealthCheckAt = row.t === null ? null : new Date(row.t as string);
    }
  }
  return out;
}

/** Logged invocations of a connector in the last 30 days, every organization. */
export async function invocationCount30d(db: Db, connectorId: string): Promise<number> {
  return db.connectorInvocation.count({
    where: { connectorId, createdAt: { gte: new Date(Date.now() - 30 * DAY_MS) } },
  });
}
