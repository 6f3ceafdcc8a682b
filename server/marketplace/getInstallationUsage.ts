import type { Database, Db } from "../db/client";
import { forEngine, sqliteTimestamp } from "../db/raw";
import type { Principal } from "../governance/principal";
import { findInstallation } from "./installationViews";

const DAY_MS = 86_400_000;
export const USAGE_DAYS = 30;

/**
 * An installation's last 30 days (InstallationUsage), computed from its invocation records by
 * two grouped queries, never from counters: a counter drifts when a write fails halfway, the
 * records cannot. Days are UTC; every day of the period is present, oldest first, today last.
 * Uninstalled installations keep their usage (their records stay).
 */
export async function getInstallationUsage(
  db: Db,
  engine: Database["engine"],
  principal: Principal,
  installationId: string,
  now = new Date(),
) {
  const installation = await findInstallation(db, principal.orgDid, installationId);
  const firstDay = Math.floor(now.getTime() / DAY_MS) * DAY_MS - (USAGE_DAYS - 1) * DAY_MS;
  const since = new Date(firstDay);
  const where = { installationId: installation.id, createdAt: { gte: since } };
  const [byStatus, last] = await Promise.all([
    db.connectorInvocation.groupBy({
      by: ["status"],
      where,
      _count: { _all: true },
      _sum: { durationMs: true, costUsd: true },
    }),
    db.connectorInvocation.findFirst({ where, orderBy: { createdAt: "desc" }, select: { createdAt: true } }),
  ]);
  let total = 0;
  let successful = 0;
  let durationSum = 0;
  let cost = 0;
  for (const g of byStatus) {
    total += g._count._all;
    if (g.status === "success") successful += g._count._all;
    durationSum += g._sum.durationMs ?? 0;
    cost += g._sum.costUsd ?? 0;
  }
  const day =
    engine === "postgresql" ? `to_char(date_trunc('day', "created_at"), 'YYYY-MM-DD')` : `substr("created_at", 1, 10)`;
  const rows = await db.$queryRawUnsafe<Array<{ day: string; n: number | bigint; cost: number | null }>>(
    ...forEngine(
      engine,
      `SELECT ${day} AS "day", COUNT(*) AS "n", SUM("cost_usd") AS "cost" FROM "connector_invocation"
       WHERE "installation_id" = $1 AND "created_at" >= $2 GROUP BY 1`,
      [installation.id, engine === "sqlite" ? sqliteTimestamp(since) : since],
    ),
  );
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const daily_breakdown = [];
  for (let t = firstDay; t <= now.getTime(); t += DAY_MS) {
    const date = new Date(t).toISOString().slice(0, 10);
    const r = byDay.get(date);
    daily_breakdown.push({ date, invocations: r ? Number(r.n) : 0, cost_usd: roundUsd(Number(r?.cost ?? 0)) });
  }
  return {
    installation_id: installation.id,
    connector_id: installation.connectorId,
    period: "30d" as const,
    statistics: {
      total_invocations: total,
      successful_invocations: successful,
      failed_invocations: total - successful,
      average_duration_ms: total === 0 ? 0 : Math.round((durationSum / total) * 10) / 10,
      total_cost_usd: roundUsd(cost),
      last_invocation_at: last?.createdAt.toISOString() ?? null,
    },
    daily_breakdown,
  };
}

/** Micro-dollars: sums of float costs otherwise show 0.30000000000000004. */
const roundUsd = (n: number) => Math.round(n * 1e6) / 1e6;
