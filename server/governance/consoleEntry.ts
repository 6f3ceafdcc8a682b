import { newId } from "../ids";
import { EMPTY_SHA256 } from "./governCall";

/**
 * A record for a console event outside the tRPC gate (sign-in, registration, sign-out, and the
 * tRPC endpoint's own refusals before any procedure runs). It lives beside the gate, not with the
 * members' sessions, because the tRPC mechanism writes it too and imports no area.
 */
export function consoleEntry(
  operation: string,
  orgDid: string,
  actorDid: string | null,
  delegationId: string | null,
  status: number,
  decision: "allowed" | "denied",
  resourceType: string | null = null,
  resourceId: string | null = null,
) {
  return {
    org_did: orgDid,
    actor_did: actorDid,
    delegation_id: delegationId,
    grantor_did: delegationId ? orgDid : null,
    capability: null,
    operation,
    resource_type: resourceType,
    resource_id: resourceId,
    decision,
    status,
    request_hash: EMPTY_SHA256,
    request_id: newId("req"),
  };
}
