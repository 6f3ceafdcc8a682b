import type { Db } from "../db/client";
import type { ApprovalRequest as Row, Prisma } from "../db/generated/sqlite/client";
import { Forbidden } from "../errors";
import type { Principal } from "../governance/principal";
import { chainParties, delegationChain, type ChainParties } from "../identity/chainParties";
import { STEP_UP_RISK_LEVELS } from "./schemas";

const ASK_A_PERSON = [
  {
    step: 1,
    description:
      "Ask a person of your organization who holds svc_api:approvals:respond, and who neither asked nor granted the asker its authority, to decide the request.",
  },
];

/**
 * The own-request rule, for every decision on an approval request (the inbox, learning proposals,
 * workflow approval nodes): no one decides their own request, whichever credential they use.
 * Refused (403 `own_request`) when the decider's chain passes through the requester's delegation
 * (a token the requester derived), when the requester's chain passes through the decider's
 * delegation (the decider granted the requester its authority), when the same person or agent
 * stands behind both chains (`chainParties`: a console key counts as the member who minted it),
 * or when the decider is the agent that asked. Refused (403 `agent_chain`; on a high or critical
 * request the step-up's 403) when the decider's chain passes through a delegation issued to an
 * agent passport: an agent may ask, never decide, not even through a token it derived for a
 * person or the organization. Returns the decider's parties, for the role rule.
 */
export async function checkOwnRequest(db: Db, principal: Principal, row: Row): Promise<ChainParties> {
  const requesterChain = await delegationChain(db, row.requesterDelegationId);
  const [decider, requester] = await Promise.all([
    chainParties(db, principal.orgDid, principal.chain),
    chainParties(db, row.orgDid, requesterChain),
  ]);
  const own = () => Forbidden("The requester cannot decide their own request.", ownRequest("own_request"));
  if (principal.chain.includes(row.requesterDelegationId) || requesterChain.includes(principal.delegationId))
    throw own();
  if (decider.parties.some((did) => requester.parties.includes(did))) throw own();
  const agent = await db.agent.findFirst({
    where: { id: row.agentId, orgDid: row.orgDid },
    select: { passportId: true },
  });
  if (agent?.passportId && decider.parties.includes(agent.passportId))
    throw Forbidden("The agent that asked cannot decide the request.", ownRequest("own_request"));
  // On a high or critical request the step-up refuses it, as it always has (403
  // approval_step_up_required, step_up non_agent_delegation): one answer per case.
  if (decider.throughAgent && !(STEP_UP_RISK_LEVELS as readonly string[]).includes(row.riskLevel))
    throw Forbidden(
      "This credential derives from a delegation issued to an agent passport: an agent may ask for approval but never decide one.",
      ownRequest("agent_chain"),
    );
  return decider;
}

/**
 * A request assigned to a console role is decided by members of that role (or admins) only: the
 * session's member, or, for a token or API key, an active member behind its chain (a console key
 * counts as the member who minted it). A key with no member behind it decides no role's request.
 */
export async function decidesForRole(db: Db, principal: Principal, decider: ChainParties, role: string) {
  if (principal.role !== undefined) return principal.role === role || principal.role === "admin";
  const members = await db.member.findMany({
    where: { passportDid: { in: decider.parties }, orgDid: principal.orgDid, status: "active" },
    select: { role: true },
  });
  return members.some((m) => m.role === role || m.role === "admin");
}

/**
 * The inbox's reading of the own-request rule, as a filter it can index (no chain reads per row):
 * leaves out requests filed by the person or agent the caller stands for, or by a credential they
 * granted directly (a console key they minted, a run they invoked). A console key stands for the
 * member who minted it (its grantor); the organization's own keys stand for the organization,
 * which is never taken for the grantor of what its members file. `checkOwnRequest` stays the rule.
 */
export function notOwnRequestWhere(principal: Principal): Prisma.ApprovalRequestWhereInput[] {
  const who =
    principal.kind !== "session" && principal.actorDid === principal.orgDid ? principal.grantorDid : principal.actorDid;
  if (who === principal.orgDid) return [{ requesterPassportId: { not: who } }];
  return [
    { requesterPassportId: { not: who } },
    { OR: [{ requesterGrantorDid: null }, { requesterGrantorDid: { not: who } }] },
  ];
}

function ownRequest(reason: "own_request" | "agent_chain") {
  return { reason, remediation: ASK_A_PERSON };
}
