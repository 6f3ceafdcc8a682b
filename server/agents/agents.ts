import type { z } from "zod";
import type { Agent } from "../db/generated/sqlite/client";
import type { Db } from "../db/client";
import { IllegalTransition, NotFound } from "../errors";
import { keyset, olderThan } from "../http/cursor";
import type { Principal } from "../governance/principal";
import type { AgentListQuery } from "./schemas";
import { agentStatusView, agentView } from "./views";
import { syncAgentTriggers } from "../events/triggers";
import { putPlatformEvent } from "../events/platformEvents";
import { issueTriggerAuthority } from "./triggerAuthority";

/** The organization's agents, newest first (AgentListResponse keeps `data.agents` and `data.next_cursor`). */
export async function listAgents(db: Db, principal: Principal, query: z.output<typeof AgentListQuery>, secret: Buffer) {
  const { after, take, page } = keyset<Agent>(secret, "agents", query, (last) => [
    last.createdAt.toISOString(),
    last.id,
  ]);
  const rows = await db.agent.findMany({
    where: {
      orgDid: principal.orgDid,
      ...(query.status ? { status: query.status } : {}),
      ...olderThan(after, "createdAt", "id"),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  // Each agent's current version, in one query (the console shows it in the list).
  const ids = items.map((a) => a.currentVersionId).filter((id): id is string => id !== null);
  const versions =
    ids.length === 0
      ? []
      : await db.agentVersion.findMany({ where: { id: { in: ids } }, select: { id: true, version: true } });
  const versionOf = new Map(versions.map((v) => [v.id, v.version]));
  return {
    data: {
      agents: items.map((a) => ({
        ...agentView(a),
        version: a.currentVersionId ? (versionOf.get(a.currentVersionId) ?? null) : null,
        updated_at: a.updatedAt.toISOString(),
      })),
      next_cursor: pagination.next_cursor,
    },
  };
}

export async function findAgent(db: Db, principal: Principal, id: string): Promise<Agent> {
  const agent = await db.agent.findFirst({ where: { id, orgDid: principal.orgDid } });
  if (!agent) throw NotFound("agent", id);
  return agent;
}

/** AgentStatusResponse, with the last 20 deploys. */
export async function agentStatus(db: Db, principal: Principal, id: string) {
  const agent = await findAgent(db, principal, id);
  const versions = await db.agentVersion.findMany({
    where: { agentId: agent.id },
    orderBy: { seq: "desc" },
    take: 20,
    omit: { bundle: true },
  });
  return agentStatusView(agent, versions);
}

/**
 * active ⇄ inactive, nothing else: a deploying agent, or a move to the state it is in, is 409
 * naming both states. An agent whose deploys all failed has nothing to run and stays inactive.
 */
export async function setAgentStatus(db: Db, principal: Principal, id: string, target: "active" | "inactive") {
  const agent = await findAgent(db, principal, id);
  const from = target === "active" ? "inactive" : "active";
  if (agent.status !== from || (target === "active" && !agent.currentVersionId))
    throw IllegalTransition("agent", agent.status, target);
  // Activating lends the agent's triggers the activator's authority (see triggerAuthority.ts).
  const triggerDelegationId = target === "active" ? await activatorTriggerAuthority(db, principal, agent) : undefined;
  const { count } = await db.agent.updateMany({
    where: { id: agent.id, status: from },
    data: { status: target, ...(triggerDelegationId ? { triggerDelegationId } : {}) },
  });
  if (count === 0) throw IllegalTransition("agent", (await findAgent(db, principal, id)).status, target);
  await syncAgentTriggers(db, agent.id);
  await putPlatformEvent(db, undefined, agent.orgDid, {
    type: target === "active" ? "agent.activated" : "agent.deactivated",
    payload: { agent_id: agent.id, name: agent.name, status: target },
  });
  return agentStatus(db, principal, id);
}

/** A new trigger authority from the activator when the current version declares triggers. */
async function activatorTriggerAuthority(db: Db, principal: Principal, agent: Agent): Promise<string | undefined> {
  if (!agent.currentVersionId) return undefined;
  const version = await db.agentVersion.findUnique({
    where: { id: agent.currentVersionId },
    select: { manifest: true },
  });
  const manifest = version?.manifest as { on?: unknown[] } | undefined;
  if (!manifest?.on?.length) return undefined;
  return issueTriggerAuthority(db, principal, agent.capabilities as string[], agent.name);
}
