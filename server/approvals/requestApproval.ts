import type { Db } from "../db/client";
import { PayloadTooLarge, ValidationFailed } from "../errors";
import { putPlatformEvent } from "../events/platformEvents";
import type { Principal } from "../governance/principal";
import { newId } from "../ids";
import { approvalChanged } from "./approvalChanged";
import {
  APPROVAL_DATA_MAX_BYTES,
  DEFAULT_APPROVAL_TTL_SECONDS,
  MAX_APPROVAL_TTL_SECONDS,
  RISK_RANK,
  type ApprovalCreate,
  type ApprovalRequest,
} from "./schemas";
import { approvalView, paramsHash, publicApprovalView } from "./views";

/** Who waits for the outcome (server/approvals/waiters.ts): its kind and a reference it understands. */
export interface WaiterRef {
  kind: string;
  ref: string;
}

/**
 * Creates a pending approval request asked by `requester` (the gate's principal: its actor is the
 * requester, its delegation the one whose revocation cancels the request) and puts
 * `approval.requested` on the bus, in the caller's transaction.
 *
 * With `opts.waiter`, the (kind, ref) pair is unique: asking again returns the request already
 * made for it, whatever its state. That is what lets a paused run replay its `ctx.approvals.request`
 * call after a restart or a resume and get the same request (and, once settled, its decision).
 */
export async function requestApproval(
  db: Db,
  requester: Principal,
  input: ApprovalCreate,
  opts: { waiter?: WaiterRef; now?: Date } = {},
): Promise<ApprovalRequest> {
  if (opts.waiter) {
    const existing = await db.approvalRequest.findUnique({
      where: { waiterKind_waiterRef: { waiterKind: opts.waiter.kind, waiterRef: opts.waiter.ref } },
    });
    if (existing && existing.orgDid === requester.orgDid) return publicApprovalView(existing);
  }
  const now = opts.now ?? new Date();
  const requestData = input.request_data ?? {};
  const size = Buffer.byteLength(JSON.stringify({ d: requestData, a: input.alternatives ?? [] }));
  if (size > APPROVAL_DATA_MAX_BYTES) throw PayloadTooLarge(APPROVAL_DATA_MAX_BYTES);

  const expiresAt = input.expires_at
    ? new Date(input.expires_at)
    : new Date(now.getTime() + DEFAULT_APPROVAL_TTL_SECONDS * 1000);
  if (expiresAt.getTime() <= now.getTime())
    throw ValidationFailed([{ field: "expires_at", code: "OUT_OF_RANGE", message: "must be in the future" }]);
  if (expiresAt.getTime() > now.getTime() + MAX_APPROVAL_TTL_SECONDS * 1000)
    throw ValidationFailed([
      { field: "expires_at", code: "OUT_OF_RANGE", message: `at most ${MAX_APPROVAL_TTL_SECONDS / 86_400} days ahead` },
    ]);

  // Named approvers must be passports of the organization: a request nobody can decide is refused now.
  const named = [
    ...(input.approver_passport_id ? [{ did: input.approver_passport_id, field: "approver_passport_id" }] : []),
    ...(input.escalation_schema?.levels ?? []).flatMap((level, i) =>
      Array.isArray(level.approvers)
        ? level.approvers.map((did, j) => ({ did, field: `escalation_schema.levels.${i}.approvers.${j}` }))
        : [],
    ),
  ];
  if (named.length > 0) {
    const known = await db.passport.findMany({
      where: { did: { in: named.map((n) => n.did) }, orgDid: requester.orgDid },
      select: { did: true },
    });
    const knownDids = new Set(known.map((p) => p.did));
    const unknown = named.filter((n) => !knownDids.has(n.did));
    if (unknown.length > 0)
      throw ValidationFailed(
        unknown.map((n) => ({
          field: n.field,
          code: "UNKNOWN_PASSPORT",
          message: `no passport ${n.did} in your organization`,
        })),
      );
  }

  const firstLevel = input.escalation_schema?.levels[0];
  const nextEscalationAt = firstLevel ? new Date(now.getTime() + firstLevel.after_seconds * 1000) : null;
  const row = await db.approvalRequest.create({
    data: {
      id: newId("apr"),
      orgDid: requester.orgDid,
      taskId: input.task_id,
      agentId: input.agent_id,
      status: "pending",
      requesterPassportId: requester.actorDid,
      requesterDelegationId: requester.delegationId,
      requesterGrantorDid: requester.grantorDid,
      approverPassportId: input.approver_passport_id ?? null,
      approverDids: input.approver_passport_id ? `|${input.approver_passport_id}|` : null,
      approverRole: null,
      actionDescription: input.action_description,
      riskLevel: input.risk_level,
      riskRank: RISK_RANK[input.risk_level],
      riskFactors: input.risk_factors ?? [],
      requestData: requestData as object,
      requestHash: paramsHash(requestData),
      alternatives: (input.alternatives ?? []) as object[],
      conversationId: input.conversation_id ?? null,
      escalationSchema: (input.escalation_schema as object | undefined) ?? undefined,
      nextEscalationAt: nextEscalationAt && nextEscalationAt < expiresAt ? nextEscalationAt : null,
      expiresAt,
      waiterKind: opts.waiter?.kind ?? null,
      waiterRef: opts.waiter?.ref ?? null,
      createdAt: now,
    },
  });
  approvalChanged(db, row);
  await putPlatformEvent(db, undefined, requester.orgDid, {
    type: "approval.requested",
    payload: approvalEventPayload(approvalView(row)),
  });
  return publicApprovalView(row);
}

/** What the bus carries about a request: enough for a Slack or e-mail bridge, not its parameters. */
export function approvalEventPayload(a: ApprovalRequest): Record<string, unknown> {
  return {
    approval_id: a.id,
    task_id: a.task_id,
    agent_id: a.agent_id,
    status: a.status,
    risk_level: a.risk_level,
    action_description: a.action_description,
    requester_passport_id: a.requester_passport_id,
    approver_passport_id: a.approver_passport_id ?? null,
    responded_by: a.responded_by ?? null,
    decision_hash: a.decision_hash ?? null,
    expires_at: a.expires_at,
  };
}
