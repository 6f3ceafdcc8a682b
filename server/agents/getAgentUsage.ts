import type { Db } from "../db/client";
import { isTriggerCapability } from "../events/schemas";
import type { Principal } from "../governance/principal";
import { usageRows, usageSince } from "../identity/capabilityUsage";
import { delegationCounts } from "../identity/usageRollup";
import { findAgent } from "./agents";

/** A run's delegation lives at most this long (SVC_RUN_DELEGATION_SECONDS' bound): runs queued earlier cannot act after `since`. */
const RUN_LOOKBACK_MS = 30 * 86_400_000;

/**
 * What an agent's runs really used since `since` (default 30 days back), against the capabilities
 * its current manifest declares (trigger declarations say what may start it and are never granted,
 * so they are left out): counted over the delegations its runs acted under, from the usage rollup.
 */
export async function getAgentUsage(db: Db, principal: Principal, id: string, sinceParam?: string) {
  const since = usageSince(sinceParam);
  const agent = await findAgent(db, principal, id);
  const runs = await db.asyncExecution.findMany({
    where: {
      orgDid: principal.orgDid,
      agentId: agent.id,
      queuedAt: { gte: new Date(since.getTime() - RUN_LOOKBACK_MS) },
    },
    select: { delegationId: true, queuedAt: true },
  });
  const counts = await delegationCounts(
    db,
    principal.orgDid,
    runs.map((r) => r.delegationId),
    since,
  );
  const declared = (agent.capabilities as string[]).filter((c) => !isTriggerCapability(c));
  return {
    agent_id: agent.id,
    since: since.toISOString(),
    ...usageRows(declared, counts),
    runs: runs.filter((r) => r.queuedAt >= since).length,
  };
}
