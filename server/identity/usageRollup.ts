import type { Db } from "../db/client";
import { counted, later, type CapabilityCounts } from "./capabilityUsage";

/** Delegation ids per rollup read: well under either engine's bound on a statement's parameters. */
const CHUNK = 500;

/**
 * Per capability, the calls let through and refused under `delegationIds` and the delegations
 * derived from them, from the UTC day of `since` on (`usageSince` gives a day's start), read from
 * the rollup (`delegation_usage_rollup`: a record counts for its delegation and each ancestor, one
 * row per delegation, capability, UTC day and shard, kept by a trigger as records are appended): a
 * few rows per delegation and day, however many calls and derived delegations they sum. The ids
 * must not derive from one another (each would count the other's calls again).
 */
export async function delegationCounts(
  db: Db,
  orgDid: string,
  delegationIds: string[],
  since: Date,
): Promise<CapabilityCounts> {
  const counts: CapabilityCounts = new Map();
  for (let i = 0; i < delegationIds.length; i += CHUNK) {
    const days = await db.delegationUsageRollup.groupBy({
      by: ["capability"],
      where: {
        orgDid,
        delegationId: { in: delegationIds.slice(i, i + CHUNK) },
        day: { gte: since.toISOString().slice(0, 10) },
      },
      _sum: { calls: true, refused: true },
      _max: { lastUsedAt: true },
    });
    for (const d of days) {
      const c = counted(counts, d.capability);
      c.calls += Number(d._sum.calls ?? 0);
      c.refused += Number(d._sum.refused ?? 0);
      c.lastUsedAt = later(c.lastUsedAt, d._max.lastUsedAt);
    }
  }
  return counts;
}
