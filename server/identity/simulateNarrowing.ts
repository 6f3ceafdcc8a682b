import type { Db } from "../db/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { coveredBy } from "./capabilities";
import { delegationSubtree, usageSince } from "./capabilityUsage";
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
  const ids = await delegationSubtree(db, principal.orgDid, id);
  const counts = await delegationCounts(db, principal.orgDid, ids, since);
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
    refusedCapabilities.length === 0
      ? []
      : await db.provenanceRecord.findMany({
          where: {
            orgDid: principal.orgDid,
            delegationId: { in: ids },
            capability: { in: refusedCapabilities },
            decision: "allowed",
            timestamp: { gte: since },
          },
          orderBy: { seq: "desc" },
          take: MAX_EXAMPLES,
          select: { id: true, operation: true, capability: true, timestamp: true },
        });
  return {
    since: since.toISOString(),
    would_refuse: wouldRefuse,
    would_allow: wouldAllow,
    examples: examples.map((r) => ({
      provenance_id: r.id,
      operation: r.operation,
      capability: r.capability as string,
      timestamp: r.timestamp.toISOString(),
    })),
  };
}
