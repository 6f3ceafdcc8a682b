import type { Db } from "../db/client";
import { counted, countsFromRecords, later, type CapabilityCounts } from "./capabilityUsage";

const DAY_MS = 86_400_000;

/**
 * Per capability, the calls let through and refused under `delegationIds` since `since`.
 *
 * Read from the rollup (`delegation_usage_rollup`, one row per delegation, capability, UTC day and
 * shard, kept by a trigger as records are appended) for the whole days after `since`'s own, and
 * from the records themselves for the part of that day the window covers: the same counts as
 * over the records alone, at the cost of a few rows per day and at most one day of records.
 */
export async function delegationCounts(
  db: Db,
  orgDid: string,
  delegationIds: string[],
  since: Date,
): Promise<CapabilityCounts> {
  const dayAfter = new Date((Math.floor(since.getTime() / DAY_MS) + 1) * DAY_MS);
  const counts = await countsFromRecords(db, orgDid, delegationIds, since, dayAfter);
  if (delegationIds.length === 0) return counts;
  const days = await db.delegationUsageRollup.groupBy({
    by: ["capability"],
    where: { orgDid, delegationId: { in: delegationIds }, day: { gt: since.toISOString().slice(0, 10) } },
    _sum: { calls: true, refused: true },
    _max: { lastUsedAt: true },
  });
  for (const d of days) {
    const c = counted(counts, d.capability);
    c.calls += Number(d._sum.calls ?? 0);
    c.refused += Number(d._sum.refused ?? 0);
    c.lastUsedAt = later(c.lastUsedAt, d._max.lastUsedAt);
  }
  return counts;
}
