import { config } from "../config";
import { type Db, sqlIn } from "../db/client";
import type { Agent, AsyncExecution, Prisma } from "../db/generated/sqlite/client";
import { rawJson, sqliteTimestamp } from "../db/raw";
import { domainError, NotFound } from "../errors";
import { newId } from "../ids";
import type { Principal } from "../governance/principal";
import { coveredBy } from "../identity/capabilities";
import { deriveDelegation } from "../identity/issueDelegation";
import { enqueue } from "../jobs";
import { assertOutboundUrl } from "../outbound/assertOutboundUrl";
import { isTriggerCapability } from "../events/schemas";
import { RUN_JOB } from "./runExecution";
import { executionView } from "./views";
import { executionChanged } from "./executionChanged";

interface InvokeBody {
  input?: unknown;
  callback_url?: string;
  max_attempts: number;
}

/**
 * Queues a run of an active agent's current version. The run acts under a delegation derived from
 * the invoker's, narrowed to the manifest's capabilities the invoker holds and bounded in time
 * (SVC_RUN_DELEGATION_SECONDS, never beyond the invoker's own): its records answer "who allowed
 * it" with the invoker, and revoking the invoker's delegation (or an ancestor) revokes it too.
 * The execution, its job and the call's record commit together.
 */
export async function invokeAgent(tx: Db, principal: Principal, agentId: string, body: InvokeBody) {
  const agent = await loadInvocableAgent(tx, agentId, principal.orgDid);
  if (!agent) throw NotFound("agent", agentId);
  return invokeLoadedAgent(tx, principal, agent, body);
}

/** What invoking an agent reads of it. */
export type InvocableAgent = Pick<Agent, "id" | "name" | "status" | "passportId" | "currentVersionId"> & {
  capabilities: string[];
};

/**
 * The organization's agent `id` as invoking needs it, in the caller's transaction: one raw query
 * (Prisma's model read cost several times as much on the invoke and ingest hot paths).
 */
export async function loadInvocableAgent(tx: Db, id: string, orgDid: string): Promise<InvocableAgent | undefined> {
  const [r] = await sqlIn(tx, config().engine).query<Record<string, unknown>>(
    `SELECT "id", "name", "status", "passport_id", "current_version_id", "capabilities" FROM "agent" WHERE "id" = $1 AND "org_did" = $2`,
    [id, orgDid],
  );
  if (!r) return undefined;
  return {
    id: r.id as string,
    name: r.name as string,
    status: r.status as string,
    passportId: (r.passport_id as string | null) ?? null,
    currentVersionId: (r.current_version_id as string | null) ?? null,
    capabilities: rawJson(r.capabilities, config().engine) as string[],
  };
}

/**
 * `invokeAgent` for a caller that has read the agent in this transaction already (a trigger, which
 * checks that it is active before starting anything): one read of the agent per run, not two.
 */
export async function invokeLoadedAgent(tx: Db, principal: Principal, agent: InvocableAgent, body: InvokeBody) {
  if (agent.status !== "active" || !agent.currentVersionId) {
    throw domainError(
      "illegal_state_transition",
      `The agent is ${agent.status}; only an active agent can be invoked.`,
      { current_state: agent.status, requested_state: "active" },
    );
  }
  if (body.callback_url !== undefined) assertOutboundUrl(body.callback_url, { field: "callback_url" });
  // Trigger declarations (event_trigger…) say what may start the agent; they are never granted to a run.
  const wanted = agent.capabilities.filter((c) => !isTriggerCapability(c));
  const issued = await deriveDelegation(tx, principal, {
    kind: "execution",
    delegateDid: agent.passportId ?? principal.orgDid,
    capabilities: narrowed(wanted, principal.capabilities),
    defaultSeconds: config().runDelegationSeconds,
    name: `run of ${agent.name}`,
  });
  const id = newId("exe");
  const taskId = newId("job");
  const now = new Date();
  const row: AsyncExecution = {
    id,
    orgDid: principal.orgDid,
    agentId: agent.id,
    agentVersionId: agent.currentVersionId,
    taskId,
    requesterPassportId: principal.actorDid,
    delegationId: issued.row.id,
    status: "queued",
    input: body.input === undefined || body.input === null ? null : (body.input as Prisma.JsonValue),
    resultJson: null,
    errorJson: null,
    progressPercent: 0,
    progressMessage: null,
    callbackUrl: body.callback_url ?? null,
    callbackSuccess: null,
    callbackAttempts: 0,
    maxAttempts: body.max_attempts,
    currentAttempt: 0,
    queuedAt: now,
    startedAt: null,
    completedAt: null,
    provenanceId: null,
    updatedAt: now,
  };
  await insertExecution(tx, row);
  executionChanged(tx, row);
  await enqueue(
    tx,
    RUN_JOB,
    { executionId: id },
    { id: taskId, orgDid: principal.orgDid, maxAttempts: body.max_attempts },
  );
  return executionView(row);
}

/**
 * The intersection of what the manifest asks for and what the invoker holds, both ways: a wanted
 * capability the invoker holds is kept, and a held one within a broader wanted one is taken
 * (manifest `svc_api:*`, invoker `svc_api:agents:*` → `svc_api:agents:*`).
 */
export function narrowed(wanted: readonly string[], held: readonly string[]): string[] {
  const out = new Set<string>();
  for (const w of wanted) {
    if (coveredBy(held, w)) out.add(w);
    else for (const h of held) if (coveredBy([w], h)) out.add(h);
  }
  return [...out];
}

/**
 * Inserts a queued execution as raw SQL through the caller's transaction: a third of the CPU of
 * Prisma's `asyncExecution.create` on the invoke path. Stored as Prisma stores it (timestamps as
 * ISO 8601 text on SQLite, `input` as JSON, jsonb on PostgreSQL); the columns left out take their
 * defaults, which `row` repeats for the answer.
 */
async function insertExecution(tx: Db, row: AsyncExecution): Promise<void> {
  const engine = config().engine;
  const at = (t: Date) => (engine === "sqlite" ? sqliteTimestamp(t) : t);
  await sqlIn(tx, engine).execute(
    `INSERT INTO "async_execution" ("id","org_did","agent_id","agent_version_id","task_id","requester_passport_id","delegation_id","status","input","callback_url","max_attempts","queued_at","updated_at")
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,${engine === "postgresql" ? "$9::jsonb" : "$9"},$10,$11,$12,$12)`,
    [
      row.id,
      row.orgDid,
      row.agentId,
      row.agentVersionId,
      row.taskId,
      row.requesterPassportId,
      row.delegationId,
      row.status,
      row.input === null ? null : JSON.stringify(row.input),
      row.callbackUrl,
      row.maxAttempts,
      at(row.queuedAt),
    ],
  );
}
