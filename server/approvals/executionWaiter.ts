import { database } from "../db/client";
import { DomainError, PayloadTooLarge } from "../errors";
import { resumePausedRun, pauseLocalRun } from "../executions/pauseRun";
import { governCall } from "../governance/governCall";
import { parseOrThrow, refuseHostileInput } from "../http/validation";
import { delegationPrincipal } from "../identity/authenticate";
import { newId } from "../ids";
import { processWide } from "../processWide";
import { requestHash } from "../provenance/record";
import type { BridgeHandler, RunInfo } from "../sandbox/bridge";
import { requestApproval } from "./requestApproval";
import { APPROVAL_DATA_MAX_BYTES, ApprovalCreate, OPEN_APPROVAL_STATUSES, type ApprovalRequest } from "./schemas";
import type { ApprovalWaiter } from "./waiters";

/**
 * `ctx.approvals.request({...})` inside a run, and the `execution` waiter that resumes it.
 *
 * Pausing without holding a thread: the call creates the request keyed by (execution id, the
 * call's sequence number in this attempt), then ends the attempt (`awaiting_approval`): the
 * execution stays `processing` with `progress_message` naming the approval, its job waits in the
 * queue (not claimed, not timed) until the decision. The decision's transaction makes the job due
 * again; the run starts over and replays: each `ctx.approvals.request` whose (execution, seq)
 * already has a settled request returns its outcome at once, and the first still open pauses the
 * run again. So a bundle must be deterministic up to its ctx calls (the same calls in the same
 * order); `ctx.events.emit` is made idempotent by giving events an id. A restart loses nothing:
 * the request, the waiting job and the execution are rows.
 */

// Per sandbox run (one attempt): how many approvals.request calls it made so far.
const callSeqs = processWide("approvals.runCallSeqs", () => new Map<string, number>());

/** What the guest receives once the request is settled. */
export interface RunApprovalOutcome {
  approval_id: string;
  status: ApprovalRequest["status"];
  /** What to execute: `modified_params` when approved with modifications, else `request_data`. */
  params: Record<string, unknown>;
  modified_params?: Record<string, unknown>;
  comment?: string | null;
  override_action?: string | null;
}

export async function requestFromRun(run: RunInfo, args: unknown[]): Promise<unknown> {
  const executionId = run.context.executionId as string | undefined;
  const delegationId = run.context.delegationId as string;
  if (!executionId) {
    const err = new Error("ctx.approvals.request is available in executions only.");
    err.name = "not_available";
    throw err;
  }
  const seq = (callSeqs.get(run.runId) ?? 0) + 1;
  if (seq === 1) run.signal.addEventListener("abort", () => callSeqs.delete(run.runId), { once: true });
  callSeqs.set(run.runId, seq);
  const raw = { ...((args[0] ?? {}) as object), task_id: executionId, agent_id: run.context.agentId };
  let approval: ApprovalRequest;
  try {
    ({ value: approval } = (await governCall(
      {
        id: "createApproval",
        label: "POST /v1/approvals",
        capability: "svc_api:approvals:write",
        resourceType: "approval",
        write: true,
        successStatus: 201,
      },
      {
        authorization: null,
        clientAddress: "sandbox",
        requestId: newId("req"),
        authenticate: async () => delegationPrincipal((await database()).read, delegationId),
      },
      async () => {
        refuseHostileInput(raw, "body");
        if (Buffer.byteLength(JSON.stringify(raw)) > APPROVAL_DATA_MAX_BYTES + 16_384)
          throw PayloadTooLarge(APPROVAL_DATA_MAX_BYTES);
        return { requestHash: requestHash(raw) };
      },
      async (scope) => {
        const body = parseOrThrow(ApprovalCreate, raw);
        const made = await requestApproval(scope.db, scope.principal, body, {
          waiter: { kind: "execution", ref: `${executionId}:${seq}` },
        });
        scope.setResource(made.id);
        if (!made.provenance_id)
          scope.onRecord(async (tx, record) => {
            await tx.approvalRequest.update({ where: { id: made.id }, data: { provenanceId: record.id } });
          });
        return made;
      },
    )) as { value: ApprovalRequest });
  } catch (e) {
    throw guestError((e as { error?: unknown }).error ?? e);
  }
  if ((OPEN_APPROVAL_STATUSES as readonly string[]).includes(approval.status)) {
    pauseLocalRun(executionId, `Waiting for approval ${approval.id}: ${approval.action_description ?? ""}`.trim());
    // The run is being stopped: the guest never sees an answer to this call in this attempt.
    return new Promise((resolve) => run.signal.addEventListener("abort", () => resolve(null), { once: true }));
  }
  return outcomeOf(approval);
}

function outcomeOf(a: ApprovalRequest): RunApprovalOutcome {
  return {
    approval_id: a.id,
    status: a.status,
    params: (a.modified_params ?? a.request_data ?? {}) as Record<string, unknown>,
    ...(a.modified_params ? { modified_params: a.modified_params } : {}),
    comment: a.response_comment ?? null,
    override_action: a.override_action ?? null,
  };
}

function guestError(inner: unknown): Error {
  if (inner instanceof DomainError && inner.status < 500) {
    const fields = inner.extra.errors?.map((f) => `${f.field}: ${f.message}`).join("; ");
    const err = new Error(fields ? `${inner.message} ${fields}` : inner.message);
    err.name = inner.code;
    return err;
  }
  const err = new Error("The approval could not be requested: svc failed (the failure is in the service's log).");
  err.name = "internal_error";
  return err;
}

/**
 * The `execution` waiter: a settled request (decided, expired, cancelled) makes its paused run's
 * job due again, in the settling transaction. A run that has ended meanwhile is not resumed.
 */
export const executionWaiter: ApprovalWaiter = {
  async onSettled(tx, approval) {
    const executionId = approval.waiter_ref.slice(0, approval.waiter_ref.lastIndexOf(":"));
    await resumePausedRun(tx, executionId, `Approval ${approval.id} ${approval.status}; resuming`);
  },
};

/** The `ctx.approvals.*` entries this area offers runs. */
export const approvalBridgeEntries: Record<string, BridgeHandler> = { "approvals.request": requestFromRun };
