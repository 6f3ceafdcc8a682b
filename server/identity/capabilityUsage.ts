import type { z } from "zod";
import { config } from "../config";
import type { Db } from "../db/client";
import { forEngine } from "../db/raw";
import { ValidationFailed } from "../errors";
import { covers, coveredBy } from "./capabilities";
import type { CapabilityUsage } from "./usageSchemas";

/** The window usage and simulation count over unless the caller says otherwise. */
export const DEFAULT_USAGE_DAYS = 30;

/** What the log says about one capability under a set of delegations since a moment. */
export interface CapabilityCount {
  calls: number;
  refused: number;
  lastUsedAt: Date | null;
}

export type CapabilityCounts = Map<string, CapabilityCount>;

const DAY_MS = 86_400_000;

/**
 * `since` of a usage or simulate request: the RFC 3339 moment given, else the default window back,
 * taken back to the start of its UTC day. Usage is counted in whole days: the rollup's rows are
 * days, and a day of records is what a finer start would cost to scan (≈ 200 ms at 1 M records).
 */
export function usageSince(since: string | undefined, now = new Date()): Date {
  const at = since === undefined ? new Date(now.getTime() - DEFAULT_USAGE_DAYS * DAY_MS) : new Date(since);
  // zod checks the shape; a shape with an impossible date (month 13) still ends here.
  if (Number.isNaN(at.getTime()) || at.getUTCFullYear() < 1970)
    throw ValidationFailed([{ field: "since", code: "invalid_format", message: "must be an RFC 3339 date-time" }]);
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

/** The recursive walk down `parent_id` (indexed) from `$1`: the delegation and all derived from it. */
export const SUBTREE_CTE = `WITH RECURSIVE "subtree"("id") AS (SELECT CAST($1 AS TEXT) UNION ALL SELECT d."id" FROM "delegation" d JOIN "subtree" s ON d."parent_id" = s."id")`;

/** The delegation and every delegation derived from it (at any depth), in the organization. */
export async function delegationSubtree(db: Db, orgDid: string, id: string): Promise<string[]> {
  const rows = await db.$queryRawUnsafe<{ id: string }[]>(
    ...forEngine(
      config().engine,
      `${SUBTREE_CTE} SELECT s."id" FROM "subtree" s JOIN "delegation" d ON d."id" = s."id" WHERE d."org_did" = $2`,
      [id, orgDid],
    ),
  );
  return rows.map((r) => r.id);
}

/** How many delegations derive from `id`, at any depth. */
export async function derivedCount(db: Db, id: string): Promise<number> {
  const [row] = await db.$queryRawUnsafe<{ n: number | bigint }[]>(
    ...forEngine(config().engine, `${SUBTREE_CTE} SELECT COUNT(*) AS "n" FROM "subtree"`, [id]),
  );
  return Number(row?.n ?? 1) - 1;
}

/**
 * Per capability, the calls let through (`decision` allowed) and refused under any of
 * `delegationIds` since `since`, read from the provenance records themselves: the reference the
 * rollup is checked against in tests (a scan of the records; the service reads the rollup).
 */
export async function countsFromRecords(
  db: Db,
  orgDid: string,
  delegationIds: string[],
  since: Date,
  until?: Date,
): Promise<CapabilityCounts> {
  const counts: CapabilityCounts = new Map();
  if (delegationIds.length === 0) return counts;
  const groups = await db.provenanceRecord.groupBy({
    by: ["capability", "decision"],
    where: {
      orgDid,
      delegationId: { in: delegationIds },
      capability: { not: null },
      timestamp: { gte: since, ...(until ? { lt: until } : {}) },
    },
    _count: { _all: true },
    _max: { timestamp: true },
  });
  for (const g of groups) {
    const c = counted(counts, g.capability as string);
    if (g.decision === "allowed") {
      c.calls += g._count._all;
      c.lastUsedAt = later(c.lastUsedAt, g._max.timestamp);
    } else c.refused += g._count._all;
  }
  return counts;
}

export function counted(counts: CapabilityCounts, capability: string): CapabilityCount {
  let c = counts.get(capability);
  if (!c) counts.set(capability, (c = { calls: 0, refused: 0, lastUsedAt: null }));
  return c;
}

export const later = (a: Date | null, b: Date | null) => (a === null ? b : b === null || a >= b ? a : b);

/**
 * The usage rows of a grant: each held capability (a wildcard summing what it covers), then the
 * used capabilities a held wildcard covers, then those only refused (not granted); and the held
 * capabilities nothing was let through under.
 */
export function usageRows(
  held: readonly string[],
  counts: CapabilityCounts,
): { capabilities: z.input<typeof CapabilityUsage>[]; unused: string[] } {
  const grant = [...new Set(held)];
  const row = (capability: string, granted: boolean, c: CapabilityCount) => ({
    capability,
    granted,
    calls: c.calls,
    refused: c.refused,
    last_used_at: c.lastUsedAt?.toISOString() ?? null,
  });
  const heldRows = grant.map((h) => {
    const sum: CapabilityCount = { calls: 0, refused: 0, lastUsedAt: null };
    for (const [capability, c] of counts) {
      if (!covers(h, capability)) continue;
      sum.calls += c.calls;
      sum.refused += c.refused;
      sum.lastUsedAt = later(sum.lastUsedAt, c.lastUsedAt);
    }
    return row(h, true, sum);
  });
  const others = [...counts.keys()].filter((c) => !grant.includes(c)).sort();
  const expanded = others.filter((c) => coveredBy(grant, c) && counts.get(c)!.calls > 0);
  const notGranted = others.filter((c) => !coveredBy(grant, c));
  return {
    capabilities: [
      ...heldRows,
      ...expanded.map((c) => row(c, true, counts.get(c)!)),
      ...notGranted.map((c) => row(c, false, counts.get(c)!)),
    ],
    unused: heldRows.filter((r) => r.calls === 0).map((r) => r.capability),
  };
}
