import { callAs, type ActingAs } from "../governance/callAs";
import { parseOrThrow } from "../http/validation";
import { linkApprovalRecord } from "./linkApprovalRecord";
import { createApprovalOp } from "./operations";
import { requestApproval, type WaiterRef } from "./requestApproval";
import { APPROVAL_DATA_MAX_BYTES, ApprovalCreate, type ApprovalRequest } from "./schemas";

/**
 * Raises an approval request as a delegation (a run's), through the gate as `POST /v1/approvals`:
 * authorized, parsed and recorded like a client's call, with `waiter` told of its outcome. A
 * request already raised for the same waiter is answered as it stands. Throws the gate's
 * `GateError` on a refusal.
 */
export async function requestApprovalAs(
  actingAs: ActingAs,
  raw: Record<string, unknown>,
  waiter: WaiterRef,
): Promise<ApprovalRequest> {
  const { value } = await callAs(createApprovalOp, actingAs, raw, {
    via: "sandbox",
    // request_data has its own bound (APPROVAL_DATA_MAX_BYTES); the rest of the body is small.
    sizeLimit: { bytes: APPROVAL_DATA_MAX_BYTES + 16_384, limit: APPROVAL_DATA_MAX_BYTES },
    async run(scope) {
      const body = parseOrThrow(ApprovalCreate, raw);
      const made = await requestApproval(scope.db, scope.principal, body, { waiter });
      scope.setResource(made.id);
      if (!made.provenance_id) scope.onRecord((tx, record) => linkApprovalRecord(tx, made.id, record.id));
      return made;
    },
  });
  return value!;
}
