import type { Db } from "../db/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { coveredBy } from "./capabilities";
import { config } from "../config";
import { forEngine, sqliteTimestamp } from "../db/raw";
import { SUBTREE_CTE, usageSince } from "./capabilityUsage";
import { delegationCounts } from "./usageRollup";

const MAX_EXAMPLES = 20;

/**
 * Replays a delegation's real calls since `since` (its derived delegations' included) against a
 * proposed grant, with the gate's own matcher (`coveredBy`): how many of the calls let through
 * the proposed grant would have refused, how many it would still allow, and the newest refused
 * ones as examples. A record carries the one capability its operation checks, so the replay
 * decides per capability and reads the records only for the examples (at most 20, by index).
 */
export async function simulateNarrowing(
  db: Db,
  principal: Principal,
  id: string,
  input: { capabilities: string[]; since?: string },
) {
  const since = usageSince(input.since);
  const delegation = await db.delegation.findFirst({ where: { id, orgDid: principal.orgDid }, select: { id: true } });
  if (!delegation) throw NotFound("delegation", id);
  const counts = await delegationCounts(db, principal.orgDid, [id], since);
  let wouldRefuse = 0;
  let wouldAllow = 0;
  const refusedCapabilities: string[] = [];
  for (const [capability, c] of counts) {
    if (c.calls === 0) continue;
    if (coveredBy(input.capabilities, capability)) wouldAllow += c.calls;
    else {
      wouldRefuse += c.calls;
      refusedCapabilities.push(capability);
    }
  }
  const examples =
    refusedCapabilities.length === 0 ? [] : await refusedExamples(db, principal.orgDid, id, refusedCapabilities, since);
  return {
    since: since.toISOString(),
    would_refuse: wouldRefuse,
    would_allow: wouldAllow,
    examples,
  };
}

/** The newest calls let through under the delegation or one derived from it with one of `capabilities`, by the (org, delegation, seq) index. */
async function refusedExamples(db: Db, orgDid: string, id: string, capabilities: string[], since: Date) {
  const engine = config().engine;
  const list = capabilities.map((_, i) => `$${i + 4}`).join(", ");
  const rows = await db.$queryRawUnsafe<
    { id: string; operation: string; capability: string; timestamp: Date | string }[]
  >(
    ...forEngine(
      engine,
      `${SUBTREE_CTE}
       SELECT p."id", p."operation", p."capability", p."timestamp" FROM "provenance_record" p
        WHERE p."org_did" = $2 AND p."delegation_id" IN (SELECT "id" FROM "subtree") AND p."timestamp" >= $3
          AND p."decision" = 'allowed' AND p."capability" IN (${list}) AND p."operation" NOT LIKE 'RUN %'
        ORDER BY p."seq" DESC LIMIT ${MAX_EXAMPLES}`,
      [id, orgDid, engine === "sqlite" ? sqliteTimestamp(since) : since, ...capabilities],
    ),
  );
  return rows.map((r) => ({
    provenance_id: r.id,
    operation: r.operation,
    capability: r.capability,
    timestamp: new Date(r.timestamp).toISOString(),
  }));
}
