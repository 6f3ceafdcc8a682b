import type { Db } from "../db/client";
import { counted, later, type CapabilityCounts } from "./capabilityUsage";

/**
 * Per capability, the calls let through and refused under `delegationIds` from the UTC day of
 * `since` on (`usageSince` gives a day's start), read from the rollup (`delegation_usage_rollup`,
 * one row per delegation, capability, UTC day and shard, kept by a trigger as records are
 * appended): a few rows per delegation and day, however many calls they sum.
 */
export async function delegationCounts(
  db: Db,
  orgDid: string,
  delegationIds: string[],
  since: Date,
): Promise<CapabilityCounts> {
  const counts: CapabilityCounts = new Map();
  if (delegationIds.length === 0) return counts;
  const days = await db.delegationUsageRollup.groupBy({
    by: ["capability"],
    where: { orgDid, delegationId: { in: delegationIds }, day: { gte: since.toISOString().slice(0, 10) } },
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
