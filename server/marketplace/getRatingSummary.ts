import type { Db } from "../db/client";
import { connectorOrThrow } from "./catalogue";

/**
 * A connector's ratings summed up (RatingSummary): counted by grade in one grouped query, so
 * the distribution and the average always agree with the ratings themselves.
 */
export async function getRatingSummary(db: Db, connectorId: string) {
  const connector = connectorOrThrow(connectorId).definition;
  const groups = await db.connectorRating.groupBy({
    by: ["rating"],
    where: { connectorId: connector.connector_id },
    _count: { _all: true },
  });
  const distribution = { "1": 0, "2": 0, "3": 0, "4": 0, "5": 0 };
  let count = 0;
  let sum = 0;
  for (const g of groups) {
    const key = String(g.rating) as keyof typeof distribution;
    if (!(key in distribution)) continue;
    distribution[key] = g._count._all;
    count += g._count._all;
    sum += g.rating * g._count._all;
  }
  return { average: count === 0 ? 0 : Math.round((sum / count) * 100) / 100, count, distribution };
}
