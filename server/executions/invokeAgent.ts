import { config } from "../config";
import type { Db } from "../db/client";
import { domainError, NotFound } from "../errors";
import { newId } from "../ids";
import type { Principal } from "../governance/principal";
import { coveredBy } from "../identity/capabilities";
import { issueDelegation } from "../identity/issueDelegation";
import { enqueue } from "../jobs";
import { assertOutboundUrl } from "../outbound/assertOutboundUrl";
import { RUN_JOB } from "./runExecution";
import { executionView } from "./views";

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
  const agent = await tx.agent.findFirst({ where: { id: agentId, orgDid: principal.orgDid } });
  if (!agent) throw NotFound("agent", agentId);
  if (agent.status !== "active" || !agent.currentVersionId) {
    throw domainError("illegal_state_transition", `The agent is ${agent.status}; only an active agent can be invoked.`, { current_state: agent.status, requested_state: "active" });
  }
  if (body.callback_url !== undefined) assertOutboundUrl(body.callback_url, { field: "callback_url" });
  const wanted = agent.capabilities as string[];
  const issued = await issueDelegation(tx, principal, {
    kind: "execution",
    delegateDid: agent.passportId ?? principal.orgDid,
    capabilities: wanted.filter((c) => coveredBy(principal.capabilities, c)),
    defaultSeconds: config().runDelegationSeconds,
    name: `run of ${agent.name}`,
  });
  const id = newId("exe");
  const taskId = newId("job");
  const row = await tx.asyncExecution.create({
    data: {
      id,
      orgDid: principal.orgDid,
      agentId: agent.id,
      agentVersionId: agent.currentVersionId,
      taskId,
      requesterPassportId: principal.actorDid,
      delegationId: issued.row.id,
      status: "queued",
      input: body.input === undefined || body.input === null ? undefined : (body.input as object),
      callbackUrl: body.callback_url ?? null,
      maxAttempts: body.max_attempts,
      queuedAt: new Date(),
    },
  });
  await enqueue(tx, RUN_JOB, { executionId: id }, { id: taskId, orgDid: principal.orgDid, maxAttempts: body.max_attempts });
  return executionView(row);
}
