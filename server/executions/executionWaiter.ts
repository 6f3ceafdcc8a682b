import { requestApprovalAs } from "../approvals/requestApprovalAs";
import { OPEN_APPROVAL_STATUSES, type ApprovalRequest } from "../approvals/schemas";
import type { ApprovalWaiter } from "../approvals/waiters";
import { guestError } from "../governance/callAs";
import { processWide } from "../processWide";
import type { BridgeHandler, RunInfo } from "../sandbox/bridge";
import { pauseLocalRun, resumePausedRun } from "./pauseRun";

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
    approval = await requestApprovalAs({ delegationId }, raw, { kind: "execution", ref: `${executionId}:${seq}` });
  } catch (e) {
    throw guestError(e, "The approval could not be requested");
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

/** The `ctx.approvals.*` entries this area offers runs: a run pauses on a request until it is settled. */
export const approvalBridgeEntries: Record<string, BridgeHandler> = { "approvals.request": requestFromRun };
